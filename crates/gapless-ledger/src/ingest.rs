//! Turning event objects (NDJSON lines or array items) into one validated
//! batch, naming the first bad one by its position.

use std::collections::HashMap;

use gapless_core::{AssetDecl, NewEvent, RawEvent};

use crate::LedgerError;

/// How positions are named in errors: `line 2` for NDJSON, `event 2` for
/// the items of a JSON array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// NDJSON lines (blank lines are skipped but counted).
    Line,
    /// Items of a JSON array.
    Event,
    /// One event on its own (`emit`, a single JSON object): no position.
    Single,
}

impl Unit {
    /// `message` about the item at 1-based `position`.
    fn at(self, position: usize, message: impl std::fmt::Display) -> String {
        match self {
            Unit::Line => format!("line {position}: {message}"),
            Unit::Event => format!("event {position}: {message}"),
            Unit::Single => message.to_string(),
        }
    }
}

/// A validated batch and where each event came from (1-based positions).
#[derive(Debug, Default)]
pub struct Batch {
    pub(crate) events: Vec<NewEvent>,
    pub(crate) positions: Vec<usize>,
    pub(crate) unit: Option<Unit>,
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

    /// Where the event at `index` of the batch came from: how positions are
    /// named and its 1-based position (lines count blank ones).
    pub fn position(&self, index: usize) -> Option<(Unit, usize)> {
        Some((self.unit?, *self.positions.get(index)?))
    }

    /// The error `message` about the event at `index` of the batch, e.g.
    /// `line 3: ...`.
    pub fn at(&self, index: usize, message: impl std::fmt::Display) -> String {
        match (self.positions.get(index), self.unit) {
            (Some(p), Some(u)) => u.at(*p, message),
            _ => message.to_string(),
        }
    }
}

/// Looks up an asset's declaration (key span, time zone).
type DeclLookup<'a> = Box<dyn FnMut(&str) -> Result<Option<AssetDecl>, LedgerError> + 'a>;

/// Builds a [`Batch`] item by item, looking up each asset's declaration once.
pub struct BatchBuilder<'a> {
    batch: Batch,
    unit: Unit,
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
    /// A builder naming positions by `unit`, looking declarations up with
    /// `lookup`.
    pub fn new(
        unit: Unit,
        lookup: impl FnMut(&str) -> Result<Option<AssetDecl>, LedgerError> + 'a,
    ) -> Self {
        BatchBuilder {
            batch: Batch {
                unit: Some(unit),
                ..Batch::default()
            },
            unit,
            position: 0,
            decls: HashMap::new(),
            lookup: Box::new(lookup),
        }
    }

    /// Add the next item (a line or an array item's JSON text).
    ///
    /// # Errors
    ///
    /// `BadInput` naming the position and the reason.
    pub fn push(&mut self, text: &str) -> Result<(), LedgerError> {
        self.position += 1;
        if self.unit == Unit::Line && text.trim().is_empty() {
            return Ok(());
        }
        let (unit, position) = (self.unit, self.position);
        let here = |e: &dyn std::fmt::Display| LedgerError::BadInput(unit.at(position, e));
        let raw = RawEvent::from_json(text).map_err(|e| here(&e))?;
        if !self.decls.contains_key(raw.asset()) {
            let decl = (self.lookup)(raw.asset()).map_err(|e| here(&e))?;
            self.decls.insert(raw.asset().to_string(), decl);
        }
        let event = raw
            .resolve(self.decls[raw.asset()].as_ref())
            .map_err(|e| here(&e))?;
        self.batch.events.push(event);
        self.batch.positions.push(self.position);
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
