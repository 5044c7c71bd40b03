//! Listing assets and rules a page at a time, the same in both backends:
//! which names a query asks for (a prefix as a range of the name index, a
//! substring, the cursor), the recent windows of an asset's overview, and
//! where a page ends. Each backend turns a query into one statement.
//!
//! Names are compared as bytes (SQLite's `BINARY`, PostgreSQL's
//! `COLLATE "C"`): for UTF-8 that is code point order, the "name order" of
//! SPEC §3, the same on both backends whatever the database's collation.

use gapless_core::Instant;

use crate::{AssetSummary, StoredRule};

/// The most assets or rules one page holds (also what `limit` 0 means).
pub const MAX_LIST_PAGE: usize = 1_000;

/// The bytes of rules' asset lists (as stored: a JSON array of names) at
/// which a page of rules ends before its limit: a rule may name 1,000
/// assets of 512 bytes, so 1,000 such rules would be half a gigabyte.
pub const RULES_PAGE_BYTES: usize = 16 << 20;

/// Microseconds of the overview's day, `[now - 24h, now)`.
pub const DAY_US: i64 = 24 * 3_600_000_000;

/// Microseconds of the overview's week, `[now - 7d, now)`.
pub const WEEK_US: i64 = 7 * DAY_US;

/// Which assets to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssetQuery {
    /// Only names that start with this.
    pub prefix: Option<String>,
    /// Only names that contain this (bytes, case-sensitive).
    pub contains: Option<String>,
    /// Only names after this one (the last name of the previous page).
    pub after: Option<String>,
    /// At most this many (0 or more than [`MAX_LIST_PAGE`]: that many).
    pub limit: usize,
}

/// One asset of a page, with what an overview of it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetOverview {
    /// As [`crate::Store::asset`] answers it.
    pub summary: AssetSummary,
    /// The end of its first covered run (the frontier from its first
    /// covered instant), if anything is covered.
    pub frontier: Option<Instant>,
    /// Covered microseconds of `[now - 24h, now)`.
    pub covered_day_us: i64,
    /// Covered microseconds of `[now - 7d, now)`.
    pub covered_week_us: i64,
}

/// One page of assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetPage {
    /// The assets, in name order.
    pub assets: Vec<AssetOverview>,
    /// The last name of the page when more follow.
    pub next: Option<String>,
}

/// Which rules to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleQuery {
    /// Only names that start with this.
    pub prefix: Option<String>,
    /// Only names after this one (the last name of the previous page).
    pub after: Option<String>,
    /// At most this many (0 or more than [`MAX_LIST_PAGE`]: that many);
    /// fewer once their asset lists reach [`RuleQuery::bytes`].
    pub limit: usize,
    /// The bytes of asset lists at which the page ends, with the rule that
    /// reaches them (0 or more than [`RULES_PAGE_BYTES`]: that many).
    pub bytes: usize,
}

/// One page of rules.
#[derive(Debug, Clone, PartialEq)]
pub struct RulePage {
    /// The rules, in name order.
    pub rules: Vec<StoredRule>,
    /// The last name of the page when more follow.
    pub next: Option<String>,
}

/// The page limit of `limit` (0: the largest page).
pub(crate) fn limit(limit: usize) -> usize {
    match limit {
        0 => MAX_LIST_PAGE,
        n => n.min(MAX_LIST_PAGE),
    }
}

/// The names a query asks for, as a range of the name index: at or after
/// `lo`, before `hi` (when there is a bound), after `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameRange {
    /// The prefix, or the empty string (every name is at or after it).
    pub(crate) lo: String,
    /// The first string past every name with the prefix, if any is.
    pub(crate) hi: Option<String>,
    /// The cursor, or the empty string (every name is after it: a name is
    /// never empty).
    pub(crate) after: String,
}

/// The byte budget of a page of rules asked with `bytes`.
pub(crate) fn rule_bytes(bytes: usize) -> usize {
    match bytes {
        0 => RULES_PAGE_BYTES,
        n => n.min(RULES_PAGE_BYTES),
    }
}

/// The range of names with `prefix` (none: every name) after `after`.
///
/// `lo` is the tighter of the two lower bounds (the cursor, once it is past
/// the prefix): SQLite seeks its index at one lower bound of a column and
/// filters by the other, so a page far into the listing would otherwise step
/// through every name before its cursor.
pub(crate) fn name_range(prefix: Option<&str>, after: Option<&str>) -> NameRange {
    let prefix = prefix.unwrap_or_default();
    let after = after.unwrap_or_default();
    NameRange {
        hi: prefix_end(prefix),
        lo: prefix.max(after).to_string(),
        after: after.to_string(),
    }
}

/// The least string greater than every string that starts with `prefix`
/// in byte (code point) order, `None` when there is none (an empty prefix,
/// or one of only U+10FFFF): its last character that can grow, grown by
/// one, with what follows it dropped. UTF-8's byte order is code point
/// order, so the names with the prefix are exactly `[prefix, end)`.
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(c) = chars.pop() {
        let next = match c as u32 {
            0xD7FF => Some('\u{E000}'),
            n => char::from_u32(n + 1),
        };
        if let Some(n) = next {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The start of the overview's week and day before `now`, and `now`, as
/// microseconds (clamped at the start of time).
pub(crate) fn recent(now: Instant) -> (i64, i64, i64) {
    let now = now.as_micros();
    (now.saturating_sub(WEEK_US), now.saturating_sub(DAY_US), now)
}

/// The page of `rows` read with [`limit`] + 1 as their limit: at most
/// `limit` of them, and the name of the last when more follow.
pub(crate) fn page_of<T>(
    mut rows: Vec<T>,
    limit: usize,
    more: bool,
    name: impl Fn(&T) -> &str,
) -> (Vec<T>, Option<String>) {
    let more = more || rows.len() > limit;
    rows.truncate(limit);
    let next = if more {
        rows.last().map(|r| name(r).to_string())
    } else {
        None
    };
    (rows, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seek_starts_at_the_tighter_bound_and_keeps_the_same_names() {
        let names = ["a", "ab", "abc", "ac", "b", "ba", "c"];
        for prefix in [None, Some("a"), Some("ab"), Some("b")] {
            for after in [
                None,
                Some("a"),
                Some("abc"),
                Some("b"),
                Some("bz"),
                Some(""),
            ] {
                let r = name_range(prefix, after);
                assert!(r.lo.as_str() >= prefix.unwrap_or_default());
                assert!(r.lo.as_str() >= after.unwrap_or_default());
                for name in names {
                    let asked = name.starts_with(prefix.unwrap_or_default())
                        && name > after.unwrap_or_default();
                    let in_range = name >= r.lo.as_str()
                        && name > r.after.as_str()
                        && r.hi.as_deref().is_none_or(|hi| name < hi);
                    assert_eq!(in_range, asked, "{prefix:?} {after:?} {name}");
                }
            }
        }
    }

    fn with_prefix(prefix: &str, name: &str) -> bool {
        let r = name_range(Some(prefix), None);
        name >= r.lo.as_str() && r.hi.as_deref().is_none_or(|hi| name < hi)
    }

    #[test]
    fn a_prefix_is_a_range_of_names() {
        assert_eq!(prefix_end("ab").as_deref(), Some("ac"));
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
        assert_eq!(prefix_end(""), None);
        let names = [
            "a",
            "ab",
            "abc",
            "ab\u{10FFFF}",
            "ac",
            "b",
            "a\u{e9}",
            "ab.x",
            "aa",
            "\u{10FFFF}",
        ];
        for prefix in ["a", "ab", "", "\u{10FFFF}", "ab\u{10FFFF}", "z", "a\u{e9}"] {
            for name in names {
                assert_eq!(
                    with_prefix(prefix, name),
                    name.starts_with(prefix),
                    "{prefix:?} {name:?}"
                );
            }
        }
    }

    #[test]
    fn pages_end_at_their_limit() {
        let names = |n: usize| (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>();
        let (rows, next) = page_of(names(3), 2, false, String::as_str);
        assert_eq!((rows.len(), next.as_deref()), (2, Some("n1")));
        let (rows, next) = page_of(names(2), 2, false, String::as_str);
        assert_eq!((rows.len(), next), (2, None));
        let (rows, next) = page_of(names(1), 2, true, String::as_str);
        assert_eq!((rows.len(), next.as_deref()), (1, Some("n0")));
        assert_eq!(limit(0), MAX_LIST_PAGE);
        assert_eq!(limit(5000), MAX_LIST_PAGE);
    }
}
