//! Slurm hostlist expressions: `gpu[01-16,20]`, `rack[1-2]-n[1-4]`, lists
//! of them joined by commas. Expanded the way Slurm does: a range keeps the
//! width of its first bound (`[08-10]` is 08 09 10, `[8-10]` is 8 9 10), and
//! several bracket groups in one name multiply out left to right.

/// The most names one expression may stand for, so a typo such as
/// `n[1-999999999]` is an error rather than an exhausted machine.
pub const MAX_NAMES: usize = crate::import::MAX_NAMES as usize;

/// One piece of a term: literal text, or the ranges of one bracket group
/// (`lo`, `hi`, width of `lo`).
enum Piece<'a> {
    Lit(&'a str),
    Ranges(Vec<(u64, u64, usize)>),
}

/// An expression read but not expanded: its terms, each a run of pieces.
pub struct Hostlist<'a> {
    terms: Vec<Vec<Piece<'a>>>,
}

/// Reads an expression without expanding it: syntax only.
pub fn parse(expr: &str) -> Result<Hostlist<'_>, String> {
    let mut terms = Vec::new();
    for term in split_top(expr)? {
        if term.is_empty() {
            return Err(format!("`{expr}` has an empty name between commas"));
        }
        let mut pieces = Vec::new();
        let mut rest = term;
        while !rest.is_empty() {
            let Some(open) = rest.find('[') else {
                if rest.contains(']') {
                    return Err(format!("`{term}` has a `]` with no `[`"));
                }
                pieces.push(Piece::Lit(rest));
                break;
            };
            let lit = &rest[..open];
            if lit.contains(']') {
                return Err(format!("`{term}` has a `]` with no `[`"));
            }
            let close =
                rest[open..].find(']').map(|c| open + c).ok_or_else(|| format!("`{term}` has an unclosed `[`"))?;
            pieces.push(Piece::Lit(lit));
            pieces.push(Piece::Ranges(ranges(&rest[open + 1..close], term)?));
            rest = &rest[close + 1..];
        }
        terms.push(pieces);
    }
    Ok(Hostlist { terms })
}

impl Hostlist<'_> {
    /// How many names the expression stands for, counted without writing
    /// one out (saturating: a count past `u64` is simply too many).
    pub fn count(&self) -> u64 {
        self.terms.iter().fold(0u64, |total, term| {
            let n = term.iter().fold(1u64, |n, p| match p {
                Piece::Lit(_) => n,
                Piece::Ranges(r) => {
                    n.saturating_mul(r.iter().fold(0u64, |k, (a, b, _)| k.saturating_add((b - a).saturating_add(1))))
                }
            });
            total.saturating_add(n)
        })
    }

    /// Every name, in order. Only called once `count` is known to be small.
    fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for term in &self.terms {
            let mut names = vec![String::new()];
            for p in term {
                match p {
                    Piece::Lit(l) => names.iter_mut().for_each(|n| n.push_str(l)),
                    Piece::Ranges(r) => {
                        let mut next = Vec::new();
                        for n in &names {
                            for &(a, b, width) in r {
                                next.extend((a..=b).map(|k| format!("{n}{k:0width$}")));
                            }
                        }
                        names = next;
                    }
                }
            }
            out.extend(names);
        }
        out
    }
}

/// Every name of a hostlist expression, in order; or why it is malformed.
/// The names are counted before any is written out: more than `MAX_NAMES`
/// is an error, whatever the size of the text.
pub fn expand(expr: &str) -> Result<Vec<String>, String> {
    expand_within(expr, MAX_NAMES as u64)
}

/// As `expand`, within a budget of names (what is left of a file's).
pub fn expand_within(expr: &str, budget: u64) -> Result<Vec<String>, String> {
    let list = parse(expr)?;
    let n = list.count();
    if n > budget.min(MAX_NAMES as u64) {
        return Err(too_many(expr, n, budget.min(MAX_NAMES as u64)));
    }
    Ok(list.names())
}

/// Why an expression is refused: it stands for `n` names, past the `left`
/// that remain of the `MAX_NAMES` one file may expand to.
pub fn too_many(expr: &str, n: u64, left: u64) -> String {
    let shown: String = expr.chars().take(60).collect();
    let cut = if shown.len() < expr.len() { "..." } else { "" };
    let n = if n == u64::MAX { "more than 18446744073709551615".to_string() } else { n.to_string() };
    if left >= MAX_NAMES as u64 {
        format!("`{shown}{cut}` stands for {n} names, more than the {MAX_NAMES} llmgw expands")
    } else {
        format!(
            "`{shown}{cut}` stands for {n} names; with the names before it, more than the {MAX_NAMES} llmgw expands in one file"
        )
    }
}

/// The terms of a list: split at the commas outside brackets.
fn split_top(expr: &str) -> Result<Vec<&str>, String> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0u32, 0);
    for (i, c) in expr.char_indices() {
        match c {
            '[' if depth > 0 => return Err(format!("`{expr}` has a `[` inside brackets")),
            '[' => depth += 1,
            ']' if depth == 0 => return Err(format!("`{expr}` has a `]` with no `[`")),
            ']' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&expr[start..i]);
                start = i + 1;
            }
            c if c.is_whitespace() || c.is_control() => return Err(format!("`{expr}` has a space in it")),
            _ => {}
        }
    }
    if depth > 0 {
        return Err(format!("`{expr}` has an unclosed `[`"));
    }
    terms.push(&expr[start..]);
    Ok(terms)
}

/// The ranges inside one pair of brackets: `01-03,7` -> (1, 3, 2), (7, 7, 1).
fn ranges(inner: &str, term: &str) -> Result<Vec<(u64, u64, usize)>, String> {
    let mut out = Vec::new();
    for part in inner.split(',') {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        if !digits(lo) || !digits(hi) {
            return Err(format!("`{term}`: `{part}` is not a number or a range of numbers"));
        }
        let too_big = || format!("`{term}`: `{part}` is too large a number");
        let (a, b) = (lo.parse::<u64>().map_err(|_| too_big())?, hi.parse::<u64>().map_err(|_| too_big())?);
        if a > b {
            return Err(format!("`{term}`: the range `{part}` runs backwards"));
        }
        // A width past this is no host name; it would only make long strings.
        if lo.len() > 20 {
            return Err(too_big());
        }
        out.push((a, b, lo.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn expands_as_slurm_does() {
        assert_eq!(expand("gpu[01-03,20]").unwrap(), ["gpu01", "gpu02", "gpu03", "gpu20"]);
        assert_eq!(expand("a,b[8-10]").unwrap(), ["a", "b8", "b9", "b10"]);
        assert_eq!(expand("n[08-10]").unwrap(), ["n08", "n09", "n10"]);
        assert_eq!(expand("r[1-2]n[1-2]").unwrap(), ["r1n1", "r1n2", "r2n1", "r2n2"]);
        assert_eq!(expand("x[1]-ib").unwrap(), ["x1-ib"]);
    }

    #[test]
    fn malformed_lists_say_why() {
        for bad in ["gpu[01-", "gpu01]", "gpu[3-1]", "gpu[a-b]", "a,,b", "gpu[1-2[3]]", "gpu[]", "a b", "n[1-99999999]"]
        {
            assert!(expand(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_counted_before_any_is_written() {
        // 200 ranges of a million each: 200 million names, refused at once.
        let inner: Vec<String> =
            (0..200u64).map(|i| format!("{}-{}", i * 1_000_000, i * 1_000_000 + 999_999)).collect();
        let expr = format!("n[{}]", inner.join(","));
        assert_eq!(parse(&expr).unwrap().count(), 200_000_000);
        assert!(expand(&expr).unwrap_err().contains("200000000 names"), "{}", expand(&expr).unwrap_err());
        // Groups multiply: 10^6 x 10^6 saturates nothing and is refused.
        assert!(expand("a[1-1000000]b[1-1000000]").is_err());
        assert_eq!(parse("a[0-18446744073709551615]b[0-9]").unwrap().count(), u64::MAX);
        assert_eq!(
            expand_within("n[1-10]", 9).unwrap_err(),
            "`n[1-10]` stands for 10 names; with the names before it, more than the 1048576 llmgw expands in one file"
        );
        assert_eq!(expand_within("n[1-10]", 10).unwrap().len(), 10);
    }

    /// One bracketed group of a generated expression, and the names it
    /// stands for, written out without any parsing.
    fn group() -> impl Strategy<Value = (String, Vec<String>)> {
        prop::collection::vec((0u64..200, 0u64..5, 1usize..4), 1..4).prop_map(|parts| {
            let mut text = Vec::new();
            let mut names = Vec::new();
            for (lo, len, width) in parts {
                let hi = lo + len;
                text.push(if len == 0 { format!("{lo:0width$}") } else { format!("{lo:0width$}-{hi}") });
                names.extend((lo..=hi).map(|n| format!("{n:0width$}")));
            }
            (format!("[{}]", text.join(",")), names)
        })
    }

    proptest! {
        #[test]
        fn matches_a_reference_expansion(
            terms in prop::collection::vec(("[a-z]{1,4}", prop::option::of(group()), "(-[a-z]{1,3})?"), 1..4)
        ) {
            let mut expr = Vec::new();
            let mut want = Vec::new();
            for (prefix, group, suffix) in terms {
                match group {
                    None => {
                        expr.push(format!("{prefix}{suffix}"));
                        want.push(format!("{prefix}{suffix}"));
                    }
                    Some((text, names)) => {
                        expr.push(format!("{prefix}{text}{suffix}"));
                        want.extend(names.iter().map(|n| format!("{prefix}{n}{suffix}")));
                    }
                }
            }
            prop_assert_eq!(expand(&expr.join(",")).unwrap(), want);
        }

        #[test]
        fn never_panics(s in "[a-z0-9\\[\\],\\- ]{0,24}") {
            let _ = expand(&s);
        }
    }
}
