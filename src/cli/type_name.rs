//! kubectl's `TYPE/NAME` form of the resource arguments (`watch cm/app-config`,
//! `index pods/web-1`), read as k8s.io/cli-runtime `pkg/resource/builder.go` reads it in
//! `Builder.ResourceTypeOrNameArgs`: when every argument holds a `/`, each is one object
//! (`splitResourceTypeName`: one slash, a single resource and a name on either side of it); when
//! only some do, the mix is refused (`hasCombinedTypeArgs`); when none does, the first argument
//! is the resource and the next a name. The commands here take one object at most, which they
//! watch or list with the field selector `metadata.name=NAME`, as kubectl does for one name.

/// The resource and the object name of `RESOURCE [NAME]` or `TYPE/NAME` as typed; `command` is
/// the subcommand, for the message. The error is kubectl's sentence, for a usage error.
pub fn resource_and_name(
    command: &str,
    resource: &str,
    name: Option<&str>,
) -> Result<(String, Option<String>), String> {
    let args: Vec<&str> = std::iter::once(resource).chain(name).collect();
    let slashed = args.iter().filter(|a| a.contains('/')).count();
    if slashed == 0 {
        return Ok((resource.to_owned(), name.map(str::to_owned)));
    }
    if slashed != args.len() {
        return Err(format!(
            "there is no need to specify a resource type as a separate argument when passing \
             arguments in resource/name form (e.g. 'kubectl deltas {command} resource/<resource_name>' \
             instead of 'kubectl deltas {command} resource resource/<resource_name>')"
        ));
    }
    if args.len() > 1 {
        return Err(format!(
            "{command} takes one object: give one resource/name, such as {resource:?}"
        ));
    }
    let segments: Vec<&str> = resource.split('/').collect();
    let [type_, name] = segments[..] else {
        return Err(format!(
            "{resource:?}: arguments in resource/name form may not have more than one slash"
        ));
    };
    if type_.is_empty() || name.is_empty() || type_.contains(',') {
        return Err(format!(
            "{resource:?}: arguments in resource/name form must have a single resource and name"
        ));
    }
    Ok((type_.to_owned(), Some(name.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::resource_and_name;

    fn split(resource: &str, name: Option<&str>) -> Result<(String, Option<String>), String> {
        resource_and_name("watch", resource, name)
    }

    #[test]
    fn type_slash_name_is_one_object() {
        assert_eq!(
            split("cm/app-config", None),
            Ok(("cm".to_owned(), Some("app-config".to_owned())))
        );
        assert_eq!(
            split("deployments.apps/web", None),
            Ok(("deployments.apps".to_owned(), Some("web".to_owned())))
        );
        assert_eq!(
            split("pods", Some("web-1")),
            Ok(("pods".to_owned(), Some("web-1".to_owned())))
        );
        assert_eq!(split("pods,cm", None), Ok(("pods,cm".to_owned(), None)));
    }

    #[test]
    fn mixed_and_malformed_forms_are_refused_as_kubectl_does() {
        let mixed = split("cm", Some("cm/app-config")).unwrap_err();
        assert!(
            mixed.starts_with("there is no need to specify a resource type"),
            "{mixed}"
        );
        assert!(split("cm/a", Some("b")).is_err());
        assert!(split("cm/a", Some("cm/b")).is_err());
        assert!(
            split("cm/a/b", None)
                .unwrap_err()
                .contains("more than one slash")
        );
        assert!(
            split("cm,pods/a", None)
                .unwrap_err()
                .contains("single resource")
        );
        assert!(split("cm/", None).unwrap_err().contains("single resource"));
    }
}
