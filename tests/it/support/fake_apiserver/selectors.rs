//! Label and field selectors, as far as list/watch filtering needs them.

use serde_json::Value;

#[derive(Clone, Debug)]
enum Requirement {
    Eq(String, String),
    NotEq(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed `labelSelector`: all requirements must hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses the `kubectl -l` syntax: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`,
    /// `k notin (a,b)`, joined by commas (commas inside parentheses belong to the set).
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    terms.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        terms.push(&s[start..]);
        let mut reqs = Vec::new();
        for term in terms.into_iter().map(str::trim).filter(|t| !t.is_empty()) {
            reqs.push(parse_requirement(term)?);
        }
        Ok(Self(reqs))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Eq(k, v) => get(k) == Some(v.as_str()),
            // As in apimachinery, `!=` and `notin` also match objects without the label.
            Requirement::NotEq(k, v) => get(k) != Some(v.as_str()),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
            Requirement::In(k, vs) => get(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|l| vs.iter().any(|v| v == l)),
        })
    }
}

fn valid_key(k: &str) -> Result<String, String> {
    if k.is_empty() || k.contains(char::is_whitespace) || k.contains(['=', '!', '(', ')']) {
        Err(format!(
            "unable to parse requirement: invalid label key \"{k}\""
        ))
    } else {
        Ok(k.to_owned())
    }
}

fn parse_requirement(term: &str) -> Result<Requirement, String> {
    if let Some(open) = term.find('(') {
        let head = term[..open].trim_end();
        let close = term
            .rfind(')')
            .filter(|c| *c > open)
            .ok_or_else(|| format!("unable to parse requirement: found '{term}', expected: ')'"))?;
        let values: Vec<String> = term[open + 1..close]
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect();
        return if let Some(k) = head.strip_suffix(" notin") {
            Ok(Requirement::NotIn(valid_key(k.trim())?, values))
        } else if let Some(k) = head.strip_suffix(" in") {
            Ok(Requirement::In(valid_key(k.trim())?, values))
        } else {
            Err(format!(
                "unable to parse requirement: found '{head}', expected: in, notin"
            ))
        };
    }
    if let Some(k) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(valid_key(k.trim())?));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok(Requirement::NotEq(
            valid_key(k.trim())?,
            v.trim().to_owned(),
        ));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Eq(valid_key(k.trim())?, v.trim().to_owned()));
    }
    Ok(Requirement::Exists(valid_key(term)?))
}

/// A parsed `fieldSelector` over `metadata.name` and `metadata.namespace`, the fields every
/// resource supports.
#[derive(Clone, Debug, Default)]
pub(crate) struct FieldSelector(Vec<(&'static str, bool, String)>);

impl FieldSelector {
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for term in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                ));
            };
            let pointer = match field.trim() {
                "metadata.name" => "/metadata/name",
                "metadata.namespace" => "/metadata/namespace",
                other => {
                    // The message `DefaultMetaV1FieldSelectorConversion` returns.
                    return Err(format!(
                        "\"{other}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                    ));
                }
            };
            out.push((pointer, equal, value.trim().to_owned()));
        }
        Ok(Self(out))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(pointer, equal, value)| {
            let actual = obj.pointer(pointer).and_then(Value::as_str).unwrap_or("");
            (actual == value) == *equal
        })
    }
}

/// Everything that decides whether an object belongs to a list or watch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    /// `Some` for requests under `/namespaces/<ns>/`.
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let ns_ok = self.namespace.as_deref().is_none_or(|ns| {
            obj.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns)
        });
        ns_ok && self.labels.matches(obj) && self.fields.matches(obj)
    }

    /// Whether a selector was given: the real server then cannot count `remainingItemCount`.
    pub(crate) fn has_selector(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty()
    }
}
