//! Label and field selectors read before any request is sent, with apimachinery's grammar, so a
//! malformed `-l` or `--field-selector` is a usage error naming the bad part rather than a 400
//! from the server once the cluster is reached.
//!
//! Labels: `labels.Parse` (apimachinery `pkg/labels/selector.go`): comma-separated requirements
//! `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`,
//! `key>1`, `key<1`; keys are qualified names and values label values
//! (`validation.IsQualifiedName`, `IsValidLabelValue`). Fields: `fields.ParseSelector`
//! (`pkg/fields/selector.go`): comma-separated `field=value`, `field==value`, `field!=value`, with
//! `\,`, `\=` and `\\` escapes in values. Which fields a resource supports only the server knows.

use std::fmt;

/// How a label requirement relates its key and values (apimachinery's `selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelOperator {
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key=value`.
    Equals,
    /// `key==value`.
    DoubleEquals,
    /// `key!=value`.
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`.
    NotIn,
    /// `key>1`.
    GreaterThan,
    /// `key<1`.
    LessThan,
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRequirement {
    /// The label key.
    pub key: String,
    /// How it is compared.
    pub operator: LabelOperator,
    /// The values, as written (duplicates removed); empty for `Exists` and `DoesNotExist`.
    pub values: Vec<String>,
}

/// A selector that does not parse: the sentence says which part is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(String);

/// Parses a label selector (`app=web,tier!=db`); the empty selector selects everything.
pub fn parse_label_selector(text: &str) -> Result<Vec<LabelRequirement>, SelectorError> {
    LabelParser {
        tokens: lex(text),
        position: 0,
    }
    .parse()
    .map_err(SelectorError)
}

/// One field selector term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field, e.g. `status.phase`.
    pub field: String,
    /// `true` for `!=`.
    pub negated: bool,
    /// The value, unescaped.
    pub value: String,
}

/// Parses a field selector (`status.phase=Running,metadata.name!=a`).
pub fn parse_field_selector(text: &str) -> Result<Vec<FieldRequirement>, SelectorError> {
    let mut terms = Vec::new();
    for term in split_terms(text).into_iter().filter(|t| !t.is_empty()) {
        let Some((field, operator, value)) = split_term(term) else {
            return Err(SelectorError(format!(
                "{term:?} has no operator: a term is FIELD=VALUE, FIELD==VALUE or FIELD!=VALUE"
            )));
        };
        if field.trim().is_empty() {
            return Err(SelectorError(format!("{term:?} has no field name")));
        }
        let value = unescape_field_value(value).map_err(|reason| {
            SelectorError(format!("the value of {field:?} in {term:?} {reason}"))
        })?;
        terms.push(FieldRequirement {
            field: field.to_owned(),
            negated: operator == "!=",
            value,
        });
    }
    Ok(terms)
}

/// `fields.splitTerms`: the terms between commas, an escaped comma (`\,`) staying in its term.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

/// `fields.splitTerm`: the field, operator and raw value, split at the first operator (`!=`,
/// `==`, `=`, tried in that order at each position).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    term.char_indices().find_map(|(i, _)| {
        ["!=", "==", "="]
            .into_iter()
            .find(|op| term[i..].starts_with(op))
            .map(|op| (&term[..i], op, &term[i + op.len()..]))
    })
}

/// `fields.UnescapeValue`: `\\`, `\,` and `\=` are the only escapes, and `,` and `=` must be
/// escaped.
fn unescape_field_value(raw: &str) -> Result<String, String> {
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => value.push(e),
                Some(e) => return Err(format!("has the unknown escape \"\\{e}\"")),
                None => return Err("ends with a lone \"\\\"".to_owned()),
            },
            ',' | '=' => return Err(format!("has an unescaped {c:?} (write \"\\{c}\")")),
            c => value.push(c),
        }
    }
    Ok(value)
}

/// The label selector lexer's tokens (`labels.Token`). Keywords and identifiers keep their text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    End,
    OpenPar,
    ClosedPar,
    Comma,
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    In,
    NotIn,
    Identifier(String),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Token::End => return f.write_str("the end of the selector"),
            Token::OpenPar => "(",
            Token::ClosedPar => ")",
            Token::Comma => ",",
            Token::Not => "!",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::GreaterThan => ">",
            Token::LessThan => "<",
            Token::In => "in",
            Token::NotIn => "notin",
            Token::Identifier(text) => text,
        };
        write!(f, "{text:?}")
    }
}

/// `labels.Lexer`: operators are the longest run of `=!(),<>` that is one; anything else up to
/// whitespace or an operator character is an identifier or the keyword `in` or `notin`.
fn lex(text: &str) -> Vec<Token> {
    const SPECIAL: &[char] = &['=', '!', '(', ')', ',', '>', '<'];
    let symbol = |s: &str| match s {
        "(" => Some(Token::OpenPar),
        ")" => Some(Token::ClosedPar),
        "," => Some(Token::Comma),
        "!" => Some(Token::Not),
        "=" => Some(Token::Equals),
        "==" => Some(Token::DoubleEquals),
        "!=" => Some(Token::NotEquals),
        ">" => Some(Token::GreaterThan),
        "<" => Some(Token::LessThan),
        _ => None,
    };
    let mut tokens = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let Some(first) = rest.chars().next() else {
            tokens.push(Token::End);
            return tokens;
        };
        if SPECIAL.contains(&first) {
            // Every single operator character is a token, so the first one always matches.
            let (mut token, mut len) = (Token::Comma, 0);
            for (i, c) in rest.char_indices() {
                if !SPECIAL.contains(&c) {
                    break;
                }
                match symbol(&rest[..i + c.len_utf8()]) {
                    Some(longer) => (token, len) = (longer, i + c.len_utf8()),
                    None => break,
                }
            }
            tokens.push(token);
            rest = &rest[len..];
        } else {
            let end = rest
                .find(|c: char| SPECIAL.contains(&c) || c.is_ascii_whitespace())
                .unwrap_or(rest.len());
            tokens.push(match &rest[..end] {
                "in" => Token::In,
                "notin" => Token::NotIn,
                word => Token::Identifier(word.to_owned()),
            });
            rest = &rest[end..];
        }
    }
}

/// `labels.Parser`: a recursive descent over the tokens.
struct LabelParser {
    tokens: Vec<Token>,
    position: usize,
}

/// Whether `in`/`notin` are keywords (after a key) or plain words (where values are expected).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

impl LabelParser {
    fn lookahead(&self, context: Context) -> Token {
        let token = self.tokens[self.position].clone();
        match (context, token) {
            (Context::Values, Token::In) => Token::Identifier("in".into()),
            (Context::Values, Token::NotIn) => Token::Identifier("notin".into()),
            (_, token) => token,
        }
    }

    fn consume(&mut self, context: Context) -> Token {
        let token = self.lookahead(context);
        // The last token is `End`, which the parser never consumes past.
        self.position = (self.position + 1).min(self.tokens.len() - 1);
        token
    }

    fn parse(mut self) -> Result<Vec<LabelRequirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.lookahead(Context::Values) {
                Token::Identifier(_) | Token::Not => {
                    requirements.push(self.requirement()?);
                    match self.consume(Context::Values) {
                        Token::End => return Ok(requirements),
                        Token::Comma => match self.lookahead(Context::Values) {
                            Token::Identifier(_) | Token::Not => {}
                            found => {
                                return Err(format!(
                                    "found {found} after \",\" where a label key was expected"
                                ));
                            }
                        },
                        found => {
                            return Err(format!(
                                "found {found} after {} where \",\" or the end was expected",
                                describe(requirements.last())
                            ));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                found => {
                    return Err(format!(
                        "found {found} where a label key or \"!\" was expected"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<LabelRequirement, String> {
        let negated = self.lookahead(Context::Values) == Token::Not;
        if negated {
            self.consume(Context::Values);
        }
        let key = match self.consume(Context::Values) {
            Token::Identifier(key) => key,
            found => return Err(format!("found {found} where a label key was expected")),
        };
        check_key(&key)?;
        let unary = matches!(self.lookahead(Context::Values), Token::End | Token::Comma);
        if negated || unary {
            if negated && !unary {
                let found = self.lookahead(Context::Values);
                return Err(format!(
                    "found {found} after \"!{key}\" where \",\" or the end was expected (\"!KEY\" \
                     takes no value)"
                ));
            }
            let operator = if negated {
                LabelOperator::DoesNotExist
            } else {
                LabelOperator::Exists
            };
            return Ok(LabelRequirement {
                key,
                operator,
                values: Vec::new(),
            });
        }
        let operator = match self.consume(Context::KeyAndOperator) {
            Token::In => LabelOperator::In,
            Token::NotIn => LabelOperator::NotIn,
            Token::Equals => LabelOperator::Equals,
            Token::DoubleEquals => LabelOperator::DoubleEquals,
            Token::NotEquals => LabelOperator::NotEquals,
            Token::GreaterThan => LabelOperator::GreaterThan,
            Token::LessThan => LabelOperator::LessThan,
            found => {
                return Err(format!(
                    "found {found} after the key {key:?} where an operator was expected (=, ==, \
                     !=, in, notin, >, <)"
                ));
            }
        };
        let values = match operator {
            LabelOperator::In | LabelOperator::NotIn => self.value_set(&key)?,
            _ => vec![self.exact_value(&key)?],
        };
        for value in &values {
            check_value(&key, value)?;
            if matches!(
                operator,
                LabelOperator::GreaterThan | LabelOperator::LessThan
            ) && value.parse::<i64>().is_err()
            {
                return Err(format!(
                    "the value {value:?} of {key:?} is not an integer, which > and < compare"
                ));
            }
        }
        Ok(LabelRequirement {
            key,
            operator,
            values,
        })
    }

    /// `(a,b)`; `()` is the empty value, and so is an empty item (`(a,,b)`).
    fn value_set(&mut self, key: &str) -> Result<Vec<String>, String> {
        match self.consume(Context::Values) {
            Token::OpenPar => {}
            found => {
                return Err(format!(
                    "found {found} after the operator of {key:?} where \"(\" was expected"
                ));
            }
        }
        let mut values: Vec<String> = Vec::new();
        let mut add = |v: String| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        // An empty item before a comma, after one, or between two (`(,a)`, `(a,)`, `(a,,b)`).
        let mut expect_value = true;
        loop {
            match self.consume(Context::Values) {
                Token::Identifier(value) if expect_value => {
                    add(value);
                    expect_value = false;
                }
                Token::Comma => {
                    if expect_value {
                        add(String::new());
                    }
                    expect_value = true;
                }
                Token::ClosedPar => {
                    if expect_value {
                        add(String::new());
                    }
                    return Ok(values);
                }
                found => {
                    return Err(format!(
                        "found {found} in the values of {key:?} where a value, \",\" or \")\" was \
                         expected"
                    ));
                }
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; nothing there is the empty value.
    fn exact_value(&mut self, key: &str) -> Result<String, String> {
        match self.lookahead(Context::Values) {
            Token::End | Token::Comma => return Ok(String::new()),
            _ => {}
        }
        match self.consume(Context::Values) {
            Token::Identifier(value) => Ok(value),
            found => Err(format!(
                "found {found} after the operator of {key:?} where a value was expected"
            )),
        }
    }
}

fn describe(requirement: Option<&LabelRequirement>) -> String {
    match requirement {
        Some(r) => format!("the requirement on {:?}", r.key),
        None => "a requirement".to_owned(),
    }
}

/// `validation.IsQualifiedName`: `NAME` or `PREFIX/NAME`, NAME at most 63 characters of letters,
/// digits, `-`, `_` and `.` that start and end with a letter or digit, PREFIX a DNS subdomain.
fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split('/').collect::<Vec<_>>()[..] {
        [name] => (None, name),
        [prefix, name] => (Some(prefix), name),
        _ => {
            return Err(format!(
                "the label key {key:?} has more than one \"/\": a key is NAME or PREFIX/NAME"
            ));
        }
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Err(format!(
            "the prefix {prefix:?} of the label key {key:?} is not a DNS subdomain (lowercase \
             letters, digits, '-' and '.', at most 253, e.g. example.com)"
        ));
    }
    if name.is_empty() || name.len() > 63 || !is_qualified_name_part(name) {
        return Err(format!(
            "the label key {key:?} is not valid: its name must be 1 to 63 letters, digits, '-', \
             '_' or '.', starting and ending with a letter or digit, with an optional DNS \
             subdomain prefix and '/' (e.g. example.com/my-key)"
        ));
    }
    Ok(())
}

/// `validation.IsValidLabelValue`: empty, or at most 63 letters, digits, `-`, `_` and `.` that
/// start and end with a letter or digit.
fn check_value(key: &str, value: &str) -> Result<(), String> {
    if value.is_empty() || (value.len() <= 63 && is_qualified_name_part(value)) {
        return Ok(());
    }
    Err(format!(
        "the value {value:?} of {key:?} is not a label value: at most 63 letters, digits, '-', \
         '_' or '.', starting and ending with a letter or digit"
    ))
}

fn is_qualified_name_part(text: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    text.starts_with(alnum)
        && text.ends_with(alnum)
        && text
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

fn is_dns_subdomain(text: &str) -> bool {
    let label_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    text.len() <= 253
        && text.split('.').all(|label| {
            label.starts_with(label_char)
                && label.ends_with(label_char)
                && label.chars().all(|c| label_char(c) || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<(String, LabelOperator, Vec<String>)> {
        parse_label_selector(text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .into_iter()
            .map(|r| (r.key, r.operator, r.values))
            .collect()
    }

    fn label_error(text: &str) -> String {
        match parse_label_selector(text) {
            Ok(parsed) => panic!("{text:?} parsed: {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_label_operator_parses() {
        use LabelOperator::*;
        let v = |values: &[&str]| values.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(labels(""), []);
        assert_eq!(labels("  "), []);
        assert_eq!(
            labels("app=web,tier!=db, env==prod"),
            [
                ("app".into(), Equals, v(&["web"])),
                ("tier".into(), NotEquals, v(&["db"])),
                ("env".into(), DoubleEquals, v(&["prod"])),
            ]
        );
        assert_eq!(
            labels("x in (foo,,baz),y,z notin (),!w"),
            [
                ("x".into(), In, v(&["foo", "", "baz"])),
                ("y".into(), Exists, v(&[])),
                ("z".into(), NotIn, v(&[""])),
                ("w".into(), DoesNotExist, v(&[])),
            ]
        );
        assert_eq!(
            labels("example.com/size>3,k<10"),
            [
                ("example.com/size".into(), GreaterThan, v(&["3"])),
                ("k".into(), LessThan, v(&["10"])),
            ]
        );
        // `in` is a value where values go, and an empty exact value is allowed.
        assert_eq!(labels("a in (in,notin)")[0].2, v(&["in", "notin"]));
        assert_eq!(labels("a=,b")[0], ("a".into(), Equals, v(&[""])));
    }

    #[test]
    fn label_errors_name_the_bad_part() {
        assert_eq!(
            label_error("!!!"),
            r#"found "!" where a label key was expected"#
        );
        assert!(
            label_error("app=web,,x").contains(r#"found "," after "," where a label key"#),
            "{}",
            label_error("app=web,,x")
        );
        assert!(label_error("a in b").contains(r#"found "b" after the operator of "a" where "(""#));
        assert!(label_error("a in (b").contains("found the end of the selector in the values"));
        assert!(label_error("a b").contains(r#"found "b" after the key "a" where an operator"#));
        assert!(label_error("a=b c").contains(r#"found "c" after the requirement on "a""#));
        assert!(label_error("!a=b").contains(r#"("!KEY" takes no value)"#));
        assert!(label_error("a>b").contains("not an integer"));
        assert!(label_error("my key=x").contains(r#"operator"#));
        assert!(label_error("-app=x").contains(r#"the label key "-app" is not valid"#));
        assert!(label_error(&format!("{}=x", "k".repeat(64))).contains("1 to 63"));
        assert!(label_error("a/b/c").contains("more than one \"/\""));
        assert!(label_error("Example.com/a").contains(r#"the prefix "Example.com""#));
        assert!(label_error("/a").contains(r#"the prefix """#));
        assert!(label_error("a=-web").contains(r#"the value "-web" of "a""#));
        assert!(label_error(&format!("a={}", "v".repeat(64))).contains("at most 63"));
        assert!(label_error("a in (x,-y)").contains(r#""-y""#));
    }

    #[test]
    fn field_selectors_take_three_operators_and_escapes() {
        let fields = |text: &str| -> Vec<(String, bool, String)> {
            parse_field_selector(text)
                .unwrap_or_else(|e| panic!("{text:?}: {e}"))
                .into_iter()
                .map(|r| (r.field, r.negated, r.value))
                .collect()
        };
        assert_eq!(fields(""), []);
        assert_eq!(
            fields("status.phase=Running,metadata.name!=a,spec.nodeName==n,"),
            [
                ("status.phase".into(), false, "Running".into()),
                ("metadata.name".into(), true, "a".into()),
                ("spec.nodeName".into(), false, "n".into()),
            ]
        );
        assert_eq!(
            fields(r"metadata.name=a\,b\=c\\d"),
            [("metadata.name".into(), false, r"a,b=c\d".into())]
        );
        assert_eq!(fields("a=")[0].2, "");

        let error = |text: &str| parse_field_selector(text).unwrap_err().to_string();
        assert!(error("status.phase").contains(r#""status.phase" has no operator"#));
        assert!(error("a=b,c").contains(r#""c" has no operator"#));
        assert!(error("=x").contains("has no field name"));
        assert!(error("a==b=c").contains(r#"has an unescaped '=' (write "\=")"#));
        assert!(error(r"a=b\x").contains(r#"unknown escape "\x""#));
        assert!(error(r"a=b\").contains("lone"));
    }
}
