//! Recording NDJSON larger than a server takes in one request: parts cut
//! at line boundaries, each one atomic request, halved when the server
//! answers 413.

use gapless_api::{Error, IngestAnswer, Position, Result, Unit};

use crate::answer;

/// The part size when none is given: input up to it goes in one request,
/// atomic as a whole. Half the server's default body limit (64 MiB), so
/// that a part cut at the end of a line still fits.
pub const DEFAULT_PART: usize = 32 * 1024 * 1024;

/// What [`crate::Client::record_in_parts`] stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// The counts of every part together.
    pub answer: IngestAnswer,
    /// Requests that stored a part, each atomically on its own.
    pub parts: usize,
    /// The largest part sent, in bytes.
    pub largest: usize,
}

/// One request of a part: its status and answer body.
pub(crate) type Post<'a> = dyn FnMut(&[u8]) -> Result<(u16, Vec<u8>)> + 'a;

/// Send `body` through `post`.
pub(crate) fn send(
    body: &mut dyn std::io::BufRead,
    source: &str,
    mut part: usize,
    post: &mut Post<'_>,
) -> Result<Parts> {
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    // The first line of `buf` in the whole input, 1-based.
    let mut line = 1_usize;
    let mut done = Parts {
        answer: IngestAnswer {
            accepted: 0,
            duplicates: 0,
        },
        parts: 0,
        largest: 0,
    };
    loop {
        fill(body, &mut buf, part, &mut eof)
            .map_err(|e| Error::bad_input(format!("cannot read {source}: {e}")))?;
        if buf.is_empty() {
            return Ok(done);
        }
        let end = cut(&buf, part, eof);
        let chunk = &buf[..end];
        let newlines = chunk.iter().filter(|b| **b == b'\n').count();
        let lines = newlines + usize::from(chunk.last() != Some(&b'\n'));
        let last = line + lines.max(1) - 1;
        // The whole input in one request: its error as it is.
        let whole = done.parts == 0 && eof && end == buf.len();
        let failed = |e: Error| {
            if whole {
                e
            } else {
                part_error(e, done.parts + 1, line, last)
            }
        };
        let (status, bytes) = post(chunk).map_err(failed)?;
        if status == 413 {
            if lines <= 1 {
                let e = answer::read::<IngestAnswer>(status, &bytes)
                    .err()
                    .unwrap_or_else(|| Error::bad_input("the server answered 413"));
                return Err(failed(
                    Error::new(
                        e.kind(),
                        format!(
                            "this line alone ({end} bytes) is larger than the server takes: {}",
                            e.message()
                        ),
                    )
                    .at(Position {
                        unit: Unit::Line,
                        number: 1,
                    }),
                ));
            }
            part = (end / 2).max(1);
            continue;
        }
        let a = answer::read::<IngestAnswer>(status, &bytes).map_err(failed)?;
        done.answer.accepted += a.accepted;
        done.answer.duplicates += a.duplicates;
        done.parts += 1;
        done.largest = done.largest.max(end);
        line += newlines;
        buf.drain(..end);
    }
}

/// Read until `buf` holds more than `part` bytes and a line end after
/// them, or the input ends.
fn fill(
    body: &mut dyn std::io::BufRead,
    buf: &mut Vec<u8>,
    part: usize,
    eof: &mut bool,
) -> std::io::Result<()> {
    while !*eof {
        let enough = buf.len() > part && buf[part..].contains(&b'\n');
        if enough || (buf.len() >= part && buf.ends_with(b"\n")) {
            return Ok(());
        }
        let got = body.fill_buf()?;
        if got.is_empty() {
            *eof = true;
            break;
        }
        let n = got.len();
        buf.extend_from_slice(got);
        body.consume(n);
    }
    Ok(())
}

/// Where the next part ends: after the last line end within `part` bytes;
/// a line longer than `part` alone; the rest at the end of the input.
fn cut(buf: &[u8], part: usize, eof: bool) -> usize {
    if eof && buf.len() <= part {
        return buf.len();
    }
    let within = &buf[..part.min(buf.len())];
    match within.iter().rposition(|b| *b == b'\n') {
        Some(i) => i + 1,
        None => buf
            .iter()
            .position(|b| *b == b'\n')
            .map_or(buf.len(), |i| i + 1),
    }
}

/// The error of part `n` (lines `first` to `last` of the input): its
/// position counted in the whole input, its message saying what is stored.
fn part_error(e: Error, n: usize, first: usize, last: usize) -> Error {
    let stored = match n {
        1 => "nothing of the input is stored".to_string(),
        2 => format!("part 1 (lines 1-{}) is stored", first - 1),
        _ => format!("parts 1-{} (lines 1-{}) are stored", n - 1, first - 1),
    };
    let message = format!(
        "{} (part {n}, lines {first}-{last}, is not stored; {stored}, each part atomically on \
         its own; sending the input again is safe when its events carry ids: the stored ones \
         are then duplicates)",
        e.message()
    );
    let again = Error::new(e.kind(), message);
    match e.position() {
        Some(Position {
            unit: Unit::Line,
            number,
        }) => again.at(Position {
            unit: Unit::Line,
            number: first + number - 1,
        }),
        Some(p) => again.at(p),
        None => again,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake server taking at most `limit` bytes a request, failing on a
    /// line that says `bad`, recording what it stored.
    fn serve(input: &str, part: usize, limit: usize) -> (Result<Parts>, Vec<String>, usize) {
        let mut stored = Vec::new();
        let mut refused = 0;
        let mut post = |chunk: &[u8]| -> Result<(u16, Vec<u8>)> {
            if chunk.len() > limit {
                refused += 1;
                return Ok((413, br#"{"error": "too large", "detail": null}"#.to_vec()));
            }
            let text = std::str::from_utf8(chunk).unwrap();
            if let Some(i) = text.lines().position(|l| l == "bad") {
                let body = format!(
                    r#"{{"error": "line {n}: bad event", "detail": {{"line": {n}}}}}"#,
                    n = i + 1
                );
                return Ok((400, body.into_bytes()));
            }
            let n = text.lines().filter(|l| !l.is_empty()).count();
            stored.extend(text.lines().map(str::to_string));
            Ok((
                200,
                format!(r#"{{"accepted": {n}, "duplicates": 0}}"#).into_bytes(),
            ))
        };
        let got = send(&mut input.as_bytes(), "input", part, &mut post);
        (got, stored, refused)
    }

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("event{i:04}\n")).collect()
    }

    #[test]
    fn small_input_is_one_part_and_large_is_cut_at_line_ends() {
        let input = lines(100); // 10 bytes a line
        let (got, stored, refused) = serve(&input, 10_000, 10_000);
        let got = got.unwrap();
        assert_eq!((got.parts, got.answer.accepted, refused), (1, 100, 0));
        assert_eq!(stored.join("\n") + "\n", input);

        let (got, stored, _) = serve(&input, 95, 10_000);
        let got = got.unwrap();
        assert_eq!(got.parts, 12, "9 lines a part");
        assert_eq!(got.answer.accepted, 100);
        assert!(got.largest <= 95);
        assert_eq!(stored.join("\n") + "\n", input);
        // No final line end.
        let (got, stored, _) = serve("a\nb\nc", 2, 10_000);
        assert_eq!(got.unwrap().parts, 3);
        assert_eq!(stored, ["a", "b", "c"]);
    }

    #[test]
    fn a_part_refused_as_too_large_is_halved_and_sent_again() {
        let input = lines(100);
        let (got, stored, refused) = serve(&input, 1_000_000, 250);
        let got = got.unwrap();
        assert!(refused >= 1);
        assert!(got.largest <= 250, "{got:?}");
        assert_eq!(got.answer.accepted, 100);
        assert_eq!(stored.join("\n") + "\n", input);
        // A line alone over the limit is named.
        let big = format!("ok\n{}\n", "x".repeat(300));
        let e = serve(&big, 1_000, 250).0.unwrap_err();
        assert_eq!(e.position().map(|p| p.number), Some(2), "{e}");
        assert!(e.to_string().contains("this line alone"), "{e}");
        assert!(
            e.to_string().contains("part 1 (lines 1-1) is stored"),
            "{e}"
        );
    }

    #[test]
    fn a_failed_part_is_named_with_what_is_stored() {
        let mut input = lines(30);
        input.push_str("bad\n");
        input.push_str(&lines(5));
        let (got, stored, _) = serve(&input, 100, 10_000); // 10 lines a part
        let e = got.unwrap_err();
        assert_eq!(stored.len(), 30);
        assert_eq!(e.position().map(|p| p.number), Some(31), "{e}");
        let text = e.to_string();
        assert!(
            text.starts_with("line 31: bad event (part 4, lines 31-"),
            "{text}"
        );
        assert!(text.contains("parts 1-3 (lines 1-30) are stored"), "{text}");
        assert!(text.contains("safe when its events carry ids"), "{text}");
        // Input in one request fails as one batch, in the words of one.
        let e = serve("bad\n", 100, 10_000).0.unwrap_err();
        assert_eq!(e.to_string(), "line 1: bad event");
        let e = serve("bad\nok1\nok2\n", 4, 10_000).0.unwrap_err();
        assert!(
            e.to_string().contains("nothing of the input is stored"),
            "{e}"
        );
    }
}
