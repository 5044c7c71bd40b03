//! [`Ask`] for the embedded ledger: the one place where a request's text
//! becomes typed values (instants in the request's zone, policies, grids,
//! kinds, cursors), with the messages the command line and the server
//! share.

use gapless_api::params;
use gapless_api::{
    Ask, AssetAnswer, AssetRequest, AssetsAnswer, BodyFormat, CheckAnswer, CoverageRequest,
    DeclAnswer, DeclareRequest, Error, EventsAnswer, EventsRequest, FrontierAnswer,
    FrontierRequest, IngestAnswer, MultiCheckAnswer, MultiCoverageRequest, RecordRequest, Result,
    SegmentsAnswer, SegmentsRequest, WindowsAnswer, WindowsRequest,
};
use gapless_api::{AssetsRequest, MultiBucketsAnswer, MultiBucketsRequest, RulesRequest};
use gapless_api::{BucketsAnswer, BucketsRequest, RuleWindowsAnswer, RuleWindowsRequest};
use gapless_api::{
    FiringsAnswer, FiringsRequest, RuleAnswer, RuleDeletedAnswer, RuleRequest, RuleSetAnswer,
    RuleSetRequest, RulesAnswer, WaitRequest,
};
use gapless_api::{PruneAnswer, PruneRequest};
use gapless_core::{AssetDecl, Duration, Interval, Policy, Rule, RuleDef, RuleSettings};

use crate::error::from_store;
use crate::ledger::check_answer;
use crate::{now, Ledger, WindowsQuery};

/// An asset of the store's listing as the API answers it.
fn answer_of(a: gapless_store::AssetSummary) -> AssetAnswer {
    AssetAnswer {
        asset: a.asset,
        events: a.events,
        first_covered: a.first_covered,
        last_covered: a.last_covered,
        last_received: a.last_received,
        key_span: a.key_span,
        tz: a.tz,
        pruned_before: a.pruned_before,
    }
}

impl Ledger {
    /// Every asset as `asset show` answers it, in name order, all at once:
    /// for what needs them all (a server's metrics), never a question's
    /// answer.
    ///
    /// # Errors
    ///
    /// Storage faults.
    pub fn asset_list(&self) -> Result<Vec<AssetAnswer>> {
        Ok(self
            .store
            .assets()
            .map_err(from_store)?
            .into_iter()
            .map(answer_of)
            .collect())
    }
}

/// The asset a question names: a name no event can have (SPEC §1: 1 to
/// 512 bytes, no control characters) is bad input, the same on every
/// backend, before a store sees it (PostgreSQL refuses a NUL in a text
/// parameter as a fault).
fn asset_name(field: &str, name: &str) -> Result<()> {
    gapless_core::validate_asset_name(name).map_err(|e| Error::bad_input(format!("{field}: {e}")))
}

/// The rule a question names: a name no rule can have (SPEC §7) is bad
/// input before a store sees it, as for [`asset_name`].
fn rule_name(field: &str, name: &str) -> Result<()> {
    gapless_core::validate_rule_name(name).map_err(|e| Error::bad_input(format!("{field}: {e}")))
}

/// A name filter (a prefix, a substring) with a character no name can
/// hold (SPEC §1: no control characters) is bad input, the same on every
/// backend, before a store sees it, as for [`asset_name`].
fn name_filter(field: &str, text: Option<&str>) -> Result<()> {
    match text.and_then(|t| t.chars().find(|c| c.is_control())) {
        Some(c) => Err(Error::bad_input(format!(
            "{field}: control character {c:?} is not allowed (no name holds one)"
        ))),
        None => Ok(()),
    }
}

/// The range and policy a coverage question asks about.
fn coverage_question(q: &CoverageRequest) -> Result<(Interval, Policy)> {
    range_and_policy(
        &q.asset,
        q.tz.as_deref(),
        (&q.start, &q.end),
        (
            q.policy.as_deref(),
            q.min_ratio.as_deref(),
            q.max_gap.as_deref(),
        ),
    )
}

/// The origin a frontier question gives (read in its zone), its asset name
/// checked; `None` when it gives none.
fn given_origin(q: &FrontierRequest) -> Result<Option<gapless_core::Instant>> {
    asset_name("asset", &q.asset)?;
    let (zone, _) = params::time_zone(q.tz.as_deref())?;
    q.origin
        .as_deref()
        .map(|text| params::instant("origin", text, &zone))
        .transpose()
}

/// The checked asset name, the range `[start, end)` read in zone `tz` and
/// the policy of a question about one asset's coverage.
fn range_and_policy(
    asset: &str,
    tz: Option<&str>,
    (start, end): (&str, &str),
    (policy, min_ratio, max_gap): (Option<&str>, Option<&str>, Option<&str>),
) -> Result<(Interval, Policy)> {
    asset_name("asset", asset)?;
    let (zone, _) = params::time_zone(tz)?;
    let range = params::range(start, end, &zone)?;
    let policy = params::policy_of(policy, min_ratio, max_gap)?;
    Ok((range, policy))
}

impl Ask for Ledger {
    fn record(&self, request: RecordRequest<'_>) -> Result<IngestAnswer> {
        match request.format {
            BodyFormat::Ndjson => self.ingest_ndjson(request.body, request.source, now()),
            BodyFormat::Json => {
                let mut body = Vec::new();
                request.body.read_to_end(&mut body).map_err(|e| {
                    Error::bad_input(format!("cannot read {}: {e}", request.source))
                })?;
                let batch = self.parse_body(BodyFormat::Json, &body)?;
                self.append(&batch, now())
            }
        }
    }

    fn coverage(&self, q: &CoverageRequest) -> Result<CheckAnswer> {
        let (range, policy) = coverage_question(q)?;
        self.check(&q.asset, range, &policy)
    }

    fn coverage_all(&self, q: &MultiCoverageRequest) -> Result<MultiCheckAnswer> {
        for asset in &q.assets {
            asset_name("assets", asset)?;
        }
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let range = params::range(&q.start, &q.end, &zone)?;
        self.check_all(&q.assets, range)
    }

    fn windows(&self, q: &WindowsRequest) -> Result<WindowsAnswer> {
        asset_name("asset", &q.asset)?;
        let (zone, zone_name) = params::time_zone(q.tz.as_deref())?;
        let query = WindowsQuery {
            range: params::range(&q.start, &q.end, &zone)?,
            grid: params::grid(&q.every)?,
            zone: &zone,
            zone_name: &zone_name,
            policy: params::policy_of(
                q.policy.as_deref(),
                q.min_ratio.as_deref(),
                q.max_gap.as_deref(),
            )?,
            incomplete_only: q.incomplete,
            key_format: &params::key_format(q.key_format.as_deref())?,
        };
        self.windows_in(&q.asset, &query)
    }

    fn segments(&self, q: &SegmentsRequest) -> Result<SegmentsAnswer> {
        asset_name("asset", &q.asset)?;
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let range = params::range(&q.start, &q.end, &zone)?;
        let limit = params::limit(q.limit.as_deref())?;
        let after = q
            .after
            .as_deref()
            .map(|c| params::segment_cursor(c, range))
            .transpose()?;
        self.segments_in(&q.asset, range, limit, after)
    }

    fn buckets(&self, q: &BucketsRequest) -> Result<BucketsAnswer> {
        asset_name("asset", &q.asset)?;
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let range = params::range(&q.start, &q.end, &zone)?;
        let n = params::bucket_count(q.buckets.as_deref())?;
        self.buckets_in(&q.asset, range, n)
    }

    fn buckets_many(&self, q: &MultiBucketsRequest) -> Result<MultiBucketsAnswer> {
        let n = params::bucket_count(q.buckets.map(|n| n.to_string()).as_deref())?;
        let items = q.assets.len();
        if items == 0 {
            return Err(Error::bad_input(
                "assets: give at least one asset and range",
            ));
        }
        if items > params::MAX_ASSETS {
            return Err(Error::bad_input(format!(
                "assets: {items} items, more than the limit of {}: ask about fewer at once",
                params::MAX_ASSETS
            )));
        }
        if items * n > params::MAX_BUCKETS_PARTS {
            return Err(Error::bad_input(format!(
                "buckets: {items} items of {n} parts are {} parts, more than the limit of {}: \
                 ask for fewer items or parts at once",
                items * n,
                params::MAX_BUCKETS_PARTS
            )));
        }
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        // Every item is read before any is answered, so that a bad one
        // fails the request before the store is asked about the others.
        let ranges = q
            .assets
            .iter()
            .enumerate()
            .map(|(i, item)| {
                asset_name("asset", &item.asset)
                    .and_then(|()| params::range(&item.start, &item.end, &zone))
                    .map_err(|e| e.context(format_args!("assets item {}", i + 1)))
            })
            .collect::<Result<Vec<_>>>()?;
        let buckets = q
            .assets
            .iter()
            .zip(ranges)
            .map(|(item, range)| self.buckets_in(&item.asset, range, n))
            .collect::<Result<Vec<_>>>()?;
        Ok(MultiBucketsAnswer { buckets })
    }

    fn events(&self, q: &EventsRequest) -> Result<EventsAnswer> {
        asset_name("asset", &q.asset)?;
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let range = params::optional_range(q.start.as_deref(), q.end.as_deref(), &zone)?;
        let kind = q.kind.as_deref().map(params::kind).transpose()?;
        let limit = params::limit(q.limit.as_deref())?;
        let after = q.after.as_deref().map(params::cursor).transpose()?;
        self.events_page(&q.asset, range, kind, limit, after)
    }

    fn frontier(&self, q: &FrontierRequest) -> Result<FrontierAnswer> {
        let origin = match given_origin(q)? {
            Some(origin) => origin,
            // From the first covered instant.
            None => match self.store.asset(&q.asset).map_err(from_store)? {
                Some(a) => a.first_covered.ok_or_else(|| {
                    Error::bad_input(format!(
                        "origin: nothing of {:?} is covered yet to start from; give an origin",
                        q.asset
                    ))
                })?,
                None => {
                    // Names the nearest asset; one created meanwhile is
                    // simply asked again.
                    self.known(&q.asset)?;
                    return self.frontier(q);
                }
            },
        };
        self.frontier_from(&q.asset, origin)
    }

    fn assets(&self, q: &AssetsRequest) -> Result<AssetsAnswer> {
        name_filter("prefix", q.prefix.as_deref())?;
        name_filter("contains", q.contains.as_deref())?;
        let query = gapless_store::AssetQuery {
            prefix: q.prefix.clone(),
            contains: q.contains.clone(),
            after: q.after.as_deref().map(params::name_after).transpose()?,
            limit: params::list_limit(q.limit.as_deref())?,
        };
        self.assets_page(&query, now())
    }

    fn asset(&self, q: &AssetRequest) -> Result<AssetAnswer> {
        asset_name("asset", &q.asset)?;
        match self.store.asset(&q.asset).map_err(from_store)? {
            Some(a) => Ok(answer_of(a)),
            // known() names the nearest asset; one created meanwhile is
            // simply asked again.
            None => match self.known(&q.asset) {
                Err(e) => Err(e),
                Ok(()) => self.asset(q),
            },
        }
    }

    fn prune(&self, q: &PruneRequest) -> Result<PruneAnswer> {
        if let Some(asset) = &q.asset {
            asset_name("asset", asset)?;
        }
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let before = params::instant("before", &q.before, &zone)?;
        self.prune_before(before, q.asset.as_deref())
    }

    fn declare(&self, q: &DeclareRequest) -> Result<DeclAnswer> {
        gapless_core::validate_asset_name(&q.asset)
            .map_err(|e| Error::bad_input(format!("asset: {e}")))?;
        // What is not given stays as declared (UTC and no span for an asset
        // never declared); `none` clears the key span.
        let current = self.store.asset_decl(&q.asset).map_err(from_store)?;
        let (zone, tz_name) = match (&q.tz, &current) {
            (Some(tz), _) => params::time_zone(Some(tz))?,
            (None, Some(decl)) => {
                let name = decl.tz.iana_name().unwrap_or("UTC").to_string();
                (decl.tz.clone(), name)
            }
            (None, None) => params::time_zone(None)?,
        };
        let key_span = match q.key_span.as_deref().map(str::trim) {
            Some(s) if s.eq_ignore_ascii_case("none") => None,
            Some(s) => {
                Some(Duration::parse(s).map_err(|e| Error::bad_input(format!("key span: {e}")))?)
            }
            None => current.as_ref().and_then(|d| d.key_span),
        };
        self.store
            .declare_asset(&q.asset, &AssetDecl { key_span, tz: zone })
            .map_err(from_store)?;
        Ok(DeclAnswer {
            asset: q.asset.clone(),
            key_span: key_span.map(|d| d.to_iso8601()),
            tz: tz_name,
        })
    }

    fn set_rule(&self, q: &RuleSetRequest) -> Result<RuleSetAnswer> {
        self.put_rule(&rule_of(q)?)
    }

    fn rule(&self, q: &RuleRequest) -> Result<RuleAnswer> {
        rule_name("rule", &q.name)?;
        Ok(crate::rule_answer(&self.stored_rule(&q.name)?))
    }

    fn rule_windows(&self, q: &RuleWindowsRequest) -> Result<RuleWindowsAnswer> {
        rule_name("rule", &q.name)?;
        let (zone, _) = params::time_zone(q.tz.as_deref())?;
        let range = params::range(&q.start, &q.end, &zone)?;
        self.rule_windows_in(&q.name, range)
    }

    fn rules(&self, q: &RulesRequest) -> Result<RulesAnswer> {
        name_filter("prefix", q.prefix.as_deref())?;
        let query = gapless_store::RuleQuery {
            prefix: q.prefix.clone(),
            after: q.after.as_deref().map(params::name_after).transpose()?,
            limit: params::list_limit(q.limit.as_deref())?,
            bytes: gapless_store::RULES_PAGE_BYTES,
        };
        self.rules_page(&query)
    }

    fn delete_rule(&self, q: &RuleRequest) -> Result<RuleDeletedAnswer> {
        rule_name("rule", &q.name)?;
        self.remove_rule(&q.name)
    }

    fn firings(&self, q: &FiringsRequest) -> Result<FiringsAnswer> {
        if let Some(rule) = &q.rule {
            rule_name("rule", rule)?;
        }
        let after = q.after.as_deref().map(params::cursor).transpose()?;
        let limit = params::page_limit(q.limit.as_deref())?;
        let wait = q
            .wait
            .as_deref()
            .map(|w| params::wait("wait", w))
            .transpose()?
            .unwrap_or_default();
        let query = gapless_store::FiringQuery {
            rule: q.rule.clone(),
            after,
            limit,
            newest: q.newest,
        };
        self.firings_page(&query, wait)
    }

    fn wait(&self, q: &WaitRequest) -> Result<CheckAnswer> {
        let (range, policy) = range_and_policy(
            &q.asset,
            q.tz.as_deref(),
            (&q.start, &q.end),
            (
                q.policy.as_deref(),
                q.min_ratio.as_deref(),
                q.max_gap.as_deref(),
            ),
        )?;
        let timeout = match &q.timeout {
            Some(t) => params::wait("timeout", t)?,
            None => params::DEFAULT_WAIT_TIMEOUT,
        };
        self.wait_complete(&q.asset, range, &policy, timeout)
    }
}

/// The rule a `rule set` request describes, checked.
fn rule_of(q: &RuleSetRequest) -> Result<Rule> {
    rule_name("rule", &q.name)?;
    // Judging a window reads every asset's coverage, as `POST /v1/coverage`
    // does, and the rule's answers list them: the same bound.
    if q.assets.len() > params::MAX_ASSETS {
        return Err(Error::bad_input(format!(
            "assets: {} assets, more than the limit of {}: a rule watches fewer",
            q.assets.len(),
            params::MAX_ASSETS
        )));
    }
    let (zone, tz_name) = params::time_zone(q.tz.as_deref())?;
    let def = RuleDef::new(
        q.assets.clone(),
        params::grid(&q.every)?,
        &tz_name,
        params::policy_of(
            q.policy.as_deref(),
            q.min_ratio.map(|r| r.to_string()).as_deref(),
            q.max_gap.as_deref(),
        )?,
        params::instant("from", &q.from, &zone)?,
        q.until
            .as_deref()
            .map(|u| params::instant("until", u, &zone))
            .transpose()?,
    )
    .map_err(|e| Error::bad_input(format!("rule {:?}: {e}", q.name)))?;
    let settings = RuleSettings {
        deadline: q.deadline.as_deref().map(params::deadline).transpose()?,
        target: q.target.clone(),
        key_format: params::key_format(q.key_format.as_deref())?,
    };
    def.check_key_format(&settings.key_format)
        .map_err(|e| Error::bad_input(format!("key_format: {e}")))?;
    settings
        .check()
        .map_err(|e| Error::bad_input(format!("rule {:?}: {e}", q.name)))?;
    Ok(Rule {
        name: q.name.clone(),
        def,
        settings,
    })
}

/// The short questions with their read awaited on the caller's task, where
/// the store has [`gapless_store::NonBlockingReads`] (PostgreSQL inside a
/// tokio runtime): a server answers them without a blocking thread.
impl Ledger {
    /// [`Ask::coverage`], its read awaited on the caller's task.
    ///
    /// `Ok(None)` when the store has no such reads here, or when the answer
    /// needs another read (nothing is covered: is the asset known at all?);
    /// the caller then asks [`Ask::coverage`], which answers in full.
    ///
    /// # Errors
    ///
    /// As [`Ask::coverage`].
    pub async fn coverage_nonblocking(&self, q: &CoverageRequest) -> Result<Option<CheckAnswer>> {
        let Some(reads) = self.store.nonblocking() else {
            return Ok(None);
        };
        let (range, policy) = coverage_question(q)?;
        let covered = reads.coverage(&q.asset, range).await.map_err(from_store)?;
        if covered.is_empty() {
            return Ok(None);
        }
        Ok(Some(check_answer(&q.asset, range, &policy, &covered)))
    }

    /// [`Ask::frontier`] from a given origin, its read awaited on the
    /// caller's task.
    ///
    /// `Ok(None)` when the store has no such reads here, when the question
    /// gives no origin (the first covered instant is another read), or when
    /// nothing covers the origin (is the asset known at all?); the caller
    /// then asks [`Ask::frontier`], which answers in full.
    ///
    /// # Errors
    ///
    /// As [`Ask::frontier`].
    pub async fn frontier_nonblocking(
        &self,
        q: &FrontierRequest,
    ) -> Result<Option<FrontierAnswer>> {
        let Some(reads) = self.store.nonblocking() else {
            return Ok(None);
        };
        let Some(origin) = given_origin(q)? else {
            return Ok(None);
        };
        let run = reads
            .run_containing(&q.asset, origin)
            .await
            .map_err(from_store)?;
        Ok(run.map(|run| FrontierAnswer {
            asset: q.asset.clone(),
            origin,
            frontier: run.end(),
        }))
    }
}
