//! [`Ask`]: the one interface of "a ledger to ask".

use crate::{
    AssetAnswer, AssetRequest, AssetsAnswer, CheckAnswer, CoverageRequest, DeclAnswer,
    DeclareRequest, EventsAnswer, EventsRequest, FrontierAnswer, FrontierRequest, IngestAnswer,
    MultiCheckAnswer, MultiCoverageRequest, RecordRequest, Result, SegmentsAnswer, SegmentsRequest,
    WindowsAnswer, WindowsRequest,
};
use crate::{AssetsRequest, MultiBucketsAnswer, MultiBucketsRequest, RulesRequest};
use crate::{BucketsAnswer, BucketsRequest, RuleWindowsAnswer, RuleWindowsRequest};
use crate::{
    FiringsAnswer, FiringsRequest, RuleAnswer, RuleDeletedAnswer, RuleRequest, RuleSetAnswer,
    RuleSetRequest, RulesAnswer, WaitRequest,
};
use crate::{PruneAnswer, PruneRequest};

/// Every question and write of gapless, one method each, taking the
/// request as the user gave it.
///
/// Implemented by the embedded ledger (`gapless_ledger::Ledger`, which
/// parses the request's text and asks its store) and by the HTTP client
/// (`gapless_client::Client`, which sends the request to a server that does
/// the same), so a caller such as the command line picks one at start and
/// asks it without caring which.
pub trait Ask {
    /// Record the events of `request` as one atomic batch.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::BadInput`] naming the first bad event by
    /// [`crate::Position`], `Conflict` for an id recorded with other
    /// content; nothing is stored then.
    fn record(&self, request: RecordRequest<'_>) -> Result<IngestAnswer>;

    /// Coverage of a range and whether it is complete under a policy.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range, policy or zone.
    fn coverage(&self, request: &CoverageRequest) -> Result<CheckAnswer>;

    /// Coverage of several assets at once.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range or no assets.
    fn coverage_all(&self, request: &MultiCoverageRequest) -> Result<MultiCheckAnswer>;

    /// The grid windows that overlap a range.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range, grid, zone or policy.
    fn windows(&self, request: &WindowsRequest) -> Result<WindowsAnswer>;

    /// Which event is the latest on each part of a range.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range or zone.
    fn segments(&self, request: &SegmentsRequest) -> Result<SegmentsAnswer>;

    /// A range cut into equal parts, each with its covered, retracted and
    /// missing microseconds.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range, count or zone; `NotFound` for an asset
    /// the ledger has never seen.
    fn buckets(&self, request: &BucketsRequest) -> Result<BucketsAnswer>;

    /// Several `buckets` answers at once, in the order asked.
    ///
    /// # Errors
    ///
    /// As [`Ask::buckets`] for any item (naming it), and `BadInput` for no
    /// items, more than 1,000, or more parts in all than
    /// [`crate::params::MAX_BUCKETS_PARTS`].
    fn buckets_many(&self, request: &MultiBucketsRequest) -> Result<MultiBucketsAnswer>;

    /// One page of events.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad range, kind, limit or cursor.
    fn events(&self, request: &EventsRequest) -> Result<EventsAnswer>;

    /// Complete up to when.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad origin or zone.
    fn frontier(&self, request: &FrontierRequest) -> Result<FrontierAnswer>;

    /// One page of the assets in name order, each with its event count,
    /// covered extent and overview.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad limit or cursor.
    fn assets(&self, request: &AssetsRequest) -> Result<AssetsAnswer>;

    /// One asset: its declaration, event count and covered extent.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen.
    fn asset(&self, request: &AssetRequest) -> Result<AssetAnswer>;

    /// Remove the detail of old events and firings (SPEC §3, `prune`):
    /// every coverage answer stays as it was.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad instant or zone; `NotFound` for an asset the
    /// ledger has never seen; `Denied` without the admin scope on a server
    /// with tokens.
    fn prune(&self, request: &PruneRequest) -> Result<PruneAnswer>;

    /// Declare an asset's key span and time zone.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad name, span or zone; `Denied` without the
    /// admin scope on a server with tokens.
    fn declare(&self, request: &DeclareRequest) -> Result<DeclAnswer>;

    /// Record a rule (SPEC §7), or new settings of one.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad field, `NotFound` for an asset the ledger has
    /// never seen, `Conflict` for a new definition of an existing rule.
    fn set_rule(&self, request: &RuleSetRequest) -> Result<RuleSetAnswer>;

    /// One rule.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule.
    fn rule(&self, request: &RuleRequest) -> Result<RuleAnswer>;

    /// A rule's windows that overlap a range, judged now on the joint
    /// coverage of its assets.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule, `BadInput` for a bad range or zone
    /// or more windows than [`crate::params::MAX_WINDOWS`].
    fn rule_windows(&self, request: &RuleWindowsRequest) -> Result<RuleWindowsAnswer>;

    /// One page of the rules in name order.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad limit or cursor.
    fn rules(&self, request: &RulesRequest) -> Result<RulesAnswer>;

    /// Remove a rule and its firings.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule.
    fn delete_rule(&self, request: &RuleRequest) -> Result<RuleDeletedAnswer>;

    /// One page of firings after a cursor, waiting for the first when asked.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad cursor, limit or wait; `NotFound` for an
    /// unknown rule.
    fn firings(&self, request: &FiringsRequest) -> Result<FiringsAnswer>;

    /// Wait until a range is complete under a policy or the timeout passes:
    /// the last check (`complete` says which).
    ///
    /// # Errors
    ///
    /// As [`Ask::coverage`].
    fn wait(&self, request: &WaitRequest) -> Result<CheckAnswer>;
}
