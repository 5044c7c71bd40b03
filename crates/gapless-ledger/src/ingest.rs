//! Turning event objects (NDJSON lines or array items) into one validated
//! batch, naming the first bad one by its position.

use std::collections::HashMap;

use gapless_api::{BodyFormat, Error, Position, Unit};
use gapless_core::{AssetDecl, NewEvent, RawEvent};
use serde_json::value::RawValue;

/// A validated batch and where each event came from (1-based positions
/// counted in `unit`; none for a single event).
#[derive(Debug, Default)]
pub struct Batch {
    events: Vec<NewEvent>,
    /// The positions, as runs: `(index of a run's first event, its
    /// position)`, the run's later events at the positions after it. Only a
    /// blank line starts a new run, so a file of millions of lines costs a
    /// few entries, not a word per event.
    positions: Vec<(usize, usize)>,
    /// Events pushed, taken ones included.
    pushed: usize,
    unit: Option<Unit>,
}

impl Batch {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// No events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events in order.
    pub fn events(&self) -> &[NewEvent] {
        &self.events
    }

    /// Where the event at `index` of the batch came from (lines count
    /// blank ones); none for a single event.
    pub fn position(&self, index: usize) -> Option<Position> {
        let unit = self.unit?;
        if index >= self.pushed {
            return None;
        }
        let run = self.positions.partition_point(|&(first, _)| first <= index);
        let (first, number) = self.positions[run.checked_sub(1)?];
        Some(Position {
            unit,
            number: number + (index - first),
        })
    }

    /// `error` about the event at `index` of the batch, with its position.
    pub fn at(&self, index: usize, error: Error) -> Error {
        match self.position(index) {
            Some(p) => error.at(p),
            None => error,
        }
    }
}

/// Looks up an asset's declaration (key span, time zone).
type DeclLookup<'a> = Box<dyn FnMut(&str) -> Result<Option<AssetDecl>, Error> + 'a>;

/// Builds a [`Batch`] item by item, looking up each asset's declaration once.
pub struct BatchBuilder<'a> {
    batch: Batch,
    position: usize,
    decls: HashMap<String, Option<AssetDecl>>,
    lookup: DeclLookup<'a>,
}

impl std::fmt::Debug for BatchBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchBuilder")
            .field("position", &self.position)
            .finish()
    }
}

impl<'a> BatchBuilder<'a> {
    /// A builder counting positions in `unit` (none: a single event, whose
    /// errors name no position), looking declarations up with `lookup`.
    pub fn new(
        unit: Option<Unit>,
        lookup: impl FnMut(&str) -> Result<Option<AssetDecl>, Error> + 'a,
    ) -> Self {
        BatchBuilder {
            batch: Batch {
                unit,
                ..Batch::default()
            },
            position: 0,
            decls: HashMap::new(),
            lookup: Box::new(lookup),
        }
    }

    /// Add the next item (a line or an array item's JSON text).
    ///
    /// # Errors
    ///
    /// `BadInput` naming the position and the reason; a failed declaration
    /// lookup keeps its own kind (a fault of the store is no bad input).
    pub fn push(&mut self, text: &str) -> Result<(), Error> {
        self.position += 1;
        if self.batch.unit == Some(Unit::Line) && text.trim().is_empty() {
            return Ok(());
        }
        let here = self.batch.unit.map(|unit| Position {
            unit,
            number: self.position,
        });
        let at = |e: Error| match here {
            Some(p) => e.at(p),
            None => e,
        };
        let raw = RawEvent::from_json(text).map_err(|e| at(e.into()))?;
        // Most events carry absolute instants: their asset's declaration
        // (a store read) is looked up only when one needs it.
        let decl = if raw.needs_decl() {
            if !self.decls.contains_key(raw.asset()) {
                let decl = (self.lookup)(raw.asset()).map_err(at)?;
                self.decls.insert(raw.asset().to_string(), decl);
            }
            self.decls[raw.asset()].as_ref()
        } else {
            None
        };
        let event = raw.resolve(decl).map_err(|e| at(e.into()))?;
        self.batch.events.push(event);
        let index = self.batch.pushed;
        let follows = self
            .batch
            .positions
            .last()
            .is_some_and(|&(first, number)| number + (index - first) == self.position);
        if !follows {
            self.batch.positions.push((index, self.position));
        }
        self.batch.pushed += 1;
        Ok(())
    }

    /// Take the events built so far, keeping their positions (for the
    /// chunks of one batch that is stored while it is still being parsed).
    pub fn take_events(&mut self) -> Vec<NewEvent> {
        std::mem::take(&mut self.batch.events)
    }

    /// Events built and not yet taken.
    pub fn pending(&self) -> usize {
        self.batch.events.len()
    }

    /// The batch built.
    pub fn finish(self) -> Batch {
        self.batch
    }
}

/// Push every item into `builder`; the batch built.
pub(crate) fn parse_items<'a>(
    mut builder: BatchBuilder<'_>,
    items: impl IntoIterator<Item = &'a str>,
) -> Result<Batch, Error> {
    for item in items {
        builder.push(item)?;
    }
    Ok(builder.finish())
}

/// A whole body of events (NDJSON, a JSON array, or one object) as one
/// batch, declarations looked up with `lookup`.
pub(crate) fn parse_body<'a>(
    format: BodyFormat,
    body: &[u8],
    lookup: impl FnMut(&str) -> Result<Option<AssetDecl>, Error> + 'a,
) -> Result<Batch, Error> {
    let text = std::str::from_utf8(body)
        .map_err(|e| Error::bad_input(format!("the body is not UTF-8: {e}")))?;
    let (unit, items) = items(format, text)?;
    parse_items(BatchBuilder::new(unit, lookup), items)
}

/// Call `visit` with the asset each item of a body names and its position
/// (none for a single event), in order, before anything else of the body is
/// read: whoever may write only some assets is refused those first, what
/// else is wrong with the body notwithstanding. Items in which no asset can
/// be read are skipped, as is a body whose items cannot be told apart:
/// [`Ledger::parse_body`](crate::Ledger::parse_body) refuses them.
///
/// # Errors
///
/// The first error of `visit`.
pub fn each_asset<E>(
    format: BodyFormat,
    body: &[u8],
    mut visit: impl FnMut(&str, Option<Position>) -> Result<(), E>,
) -> Result<(), E> {
    /// Only the asset of an event; other fields are skipped unread.
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        asset: Option<std::borrow::Cow<'a, str>>,
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return Ok(());
    };
    let Ok((unit, items)) = items(format, text) else {
        return Ok(());
    };
    for (i, item) in items.enumerate() {
        if let Ok(Named { asset: Some(asset) }) = serde_json::from_str(item) {
            let position = unit.map(|unit| Position {
                unit,
                number: i + 1,
            });
            visit(&asset, position)?;
        }
    }
    Ok(())
}

/// The items of a body: the unit their positions count in (none for a
/// single event) and each item's text, blank NDJSON lines included (they
/// count as lines).
fn items(format: BodyFormat, text: &str) -> Result<(Option<Unit>, Items<'_>), Error> {
    match format {
        BodyFormat::Ndjson => Ok((Some(Unit::Line), Items::Lines(text.split('\n')))),
        BodyFormat::Json if text.trim_start().starts_with('[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| {
                Error::bad_input(format!("events: not a JSON array of event objects: {e}"))
            })?;
            Ok((Some(Unit::Event), Items::Array(items.into_iter())))
        }
        BodyFormat::Json => {
            // One object a line sent as JSON is the common mistake: say
            // how to send it instead.
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            let one = serde_json::from_str::<&RawValue>(text);
            match one {
                Err(e) if lines > 1 && e.to_string().starts_with("trailing characters") => {
                    Err(Error::bad_input(format!(
                        "the body holds {lines} lines of JSON, not one object or array: \
                         send NDJSON with Content-Type: application/x-ndjson, or a JSON array"
                    )))
                }
                _ => Ok((None, Items::One(Some(text)))),
            }
        }
    }
}

/// The items of a body, as [`items`] splits it.
enum Items<'a> {
    Lines(std::str::Split<'a, char>),
    Array(std::vec::IntoIter<&'a RawValue>),
    One(Option<&'a str>),
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Items::Lines(lines) => lines.next().map(|l| l.strip_suffix('\r').unwrap_or(l)),
            Items::Array(items) => items.next().map(|r| r.get()),
            Items::One(one) => one.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions against the line numbers, blank lines anywhere (first,
    /// in runs, last), with chunks taken in between as a streamed file's.
    #[test]
    fn every_event_keeps_its_line_number() {
        let event = r#"{"asset":"a","start":"2025-01-01T00:00:00Z","end":"2025-01-01T01:00:00Z"}"#;
        let lines = ["", event, event, "", "", event, event, event, "", event, ""];
        let mut builder = BatchBuilder::new(Some(Unit::Line), |_| Ok(None));
        let mut expected = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            builder.push(line).unwrap();
            if !line.is_empty() {
                expected.push(i + 1);
            }
            if i == 6 {
                builder.take_events();
            }
        }
        let batch = builder.finish();
        let got: Vec<usize> = (0..expected.len())
            .map(|i| batch.position(i).unwrap().number)
            .collect();
        assert_eq!(got, expected);
        assert_eq!(batch.position(expected.len()), None);
    }

    /// The assets a body names, by the positions its errors use; items
    /// without a readable asset skipped, the first refusal ending the walk.
    #[test]
    fn each_asset_names_the_readable_ones_by_position() {
        let body = "{\"asset\":\"a\"}\n\n{\"asset\": 5}\nnot json\n{\"x\": [1], \"asset\":\"b\\u0041\"}\r\n";
        let mut seen = Vec::new();
        each_asset::<()>(BodyFormat::Ndjson, body.as_bytes(), |asset, at| {
            seen.push((asset.to_string(), at.map(|p| p.number)));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [("a".into(), Some(1)), ("bA".into(), Some(5))]);
        let array = r#"[{"asset": "a"}, {"asset": "b"}, {"asset": "c"}]"#;
        let refused = each_asset(BodyFormat::Json, array.as_bytes(), |asset, at| {
            if asset == "b" {
                Err(at)
            } else {
                Ok(())
            }
        });
        assert_eq!(
            refused,
            Err(Some(Position {
                unit: Unit::Event,
                number: 2
            }))
        );
        let one = each_asset(BodyFormat::Json, br#"{"asset": "z"}"#, |asset, at| {
            Err((asset.to_string(), at))
        });
        assert_eq!(one, Err(("z".to_string(), None)));
    }
}
