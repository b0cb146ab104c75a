//! The one glob over object keys (`MetaNamespaceKeyFunc`'s `namespace/name`), for `--match` and a controller's `fail-keys=`.
//!
//! A key is `namespace/name` (`name` for a cluster-scoped object), matched whole: `*` is any run
//! of characters, `/` included (a key has one `/` at most, so a glob never needs to cross it
//! twice), `?` one character, `[abc]`, `[a-z]` one of a set, `[!a-c]` or `[^a-c]` one outside
//! it: the shell's `fnmatch` without `FNM_PATHNAME`, which is how kubectl's users already write
//! globs. A `]` first in a set is a member of it. There is no escape: no character a key may
//! hold (names are DNS labels and subdomains) needs one. A `[` that no `]` closes is refused,
//! rather than read literally as it would never match.
//!
//! Written here rather than with a glob crate: `glob` and `globset` match paths (`**`, `/` kept
//! from `*` by option, `{a,b}`, `\` escapes), a grammar a key does not need; a key is one short
//! string, and these four forms are the whole grammar.

use std::fmt;

/// A parsed glob over keys (`default/a`, `demo/web-*`, `default/[ab]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGlob {
    text: String,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// `*`.
    Star,
    /// `?`.
    One,
    /// A character standing for itself.
    Literal(char),
    /// `[…]`: inclusive ranges (a single character is a range of one); `negated` for `[!…]`.
    Set {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
}

impl KeyGlob {
    /// Parses a glob; the error is a sentence for the flag's message.
    pub fn parse(text: &str) -> Result<KeyGlob, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let token = match chars[i] {
                '*' => Token::Star,
                '?' => Token::One,
                '[' => {
                    let (set, end) = set(&chars, i).ok_or_else(|| {
                        format!(
                            "{text:?} opens a set with `[` that no `]` closes: write a set as \
                             [abc], [a-z] or [!a-z]"
                        )
                    })?;
                    i = end;
                    set
                }
                c => Token::Literal(c),
            };
            tokens.push(token);
            i += 1;
        }
        Ok(KeyGlob {
            text: text.to_owned(),
            tokens,
        })
    }

    /// Whether `key` matches, whole. The classic greedy match: on a mismatch, go back to the last
    /// `*` and let it take one more character (no recursion, so no pattern can blow the stack;
    /// linear in practice).
    pub fn matches(&self, key: &str) -> bool {
        let (pattern, text): (&[Token], Vec<char>) = (&self.tokens, key.chars().collect());
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pattern.get(p) {
                Some(Token::Star) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(token) if token.takes(text[t]) => {
                    p += 1;
                    t += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|token| *token == Token::Star)
    }
}

impl Token {
    /// Whether this one-character token matches `c`.
    fn takes(&self, c: char) -> bool {
        match self {
            Token::Star => false,
            Token::One => true,
            Token::Literal(l) => *l == c,
            Token::Set { ranges, negated } => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

/// The set opening at `chars[open]` (a `[`) and the index of its closing `]`; `None` when
/// nothing closes it.
fn set(chars: &[char], open: usize) -> Option<(Token, usize)> {
    let mut i = open + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let first = i;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && i > first {
            return Some((Token::Set { ranges, negated }, i));
        }
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                ranges.push((c, hi));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
}

impl fmt::Display for KeyGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::KeyGlob;

    fn matches(glob: &str, key: &str) -> bool {
        KeyGlob::parse(glob).unwrap().matches(key)
    }

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("demo/web-*", "demo/web-1"));
        assert!(matches("*", "a/b"));
        assert!(matches("d?mo/*", "demo/x"));
        assert!(!matches("demo/web-*", "demo/db-1"));
        assert!(!matches("demo/web", "demo/web-1"));
    }

    #[test]
    fn sets_ranges_and_negation() {
        assert!(matches("default/[ab]", "default/a"));
        assert!(matches("default/[ab]", "default/b"));
        assert!(!matches("default/[ab]", "default/c"));
        assert!(matches("web-[0-9]", "web-7"));
        assert!(!matches("web-[!0-9]", "web-7"));
        assert!(matches("web-[^0-9]", "web-x"));
        assert!(matches("[]x]", "]"));
        assert!(matches("a[-b]", "a-"));
        assert!(matches("*-[ab]*", "x-b-y"));
    }

    #[test]
    fn an_unclosed_set_is_refused() {
        let error = KeyGlob::parse("default/[ab").unwrap_err();
        assert!(error.contains("no `]` closes"), "{error}");
        assert!(KeyGlob::parse("[]").is_err());
    }

    /// The greedy match against a plain recursive one, on every short glob and key.
    #[test]
    fn agrees_with_a_recursive_match() {
        fn reference(p: &[char], t: &[char]) -> bool {
            match (p.first(), t.first()) {
                (None, _) => t.is_empty(),
                (Some('*'), _) => reference(&p[1..], t) || (!t.is_empty() && reference(p, &t[1..])),
                (Some(_), None) => false,
                (Some('?'), Some(_)) => reference(&p[1..], &t[1..]),
                (Some(c), Some(d)) => c == d && reference(&p[1..], &t[1..]),
            }
        }
        let alphabet = ['a', 'b', '*', '?'];
        let words = |n: usize, of: &[char]| -> Vec<Vec<char>> {
            let mut all = vec![Vec::new()];
            for _ in 0..n {
                let longer: Vec<Vec<char>> = all
                    .iter()
                    .flat_map(|w| {
                        of.iter().map(move |c| {
                            let mut w = w.clone();
                            w.push(*c);
                            w
                        })
                    })
                    .collect();
                all.extend(longer);
                all.sort();
                all.dedup();
            }
            all
        };
        for glob in words(4, &alphabet) {
            let parsed = KeyGlob::parse(&glob.iter().collect::<String>()).unwrap();
            for key in words(4, &['a', 'b']) {
                let text: String = key.iter().collect();
                assert_eq!(
                    parsed.matches(&text),
                    reference(&glob, &key),
                    "{glob:?} {text}"
                );
            }
        }
    }
}
