//! The OpenAPI document served at `/openapi.json`.
//!
//! Paths come from the handlers' `#[utoipa::path]` attributes as they are
//! routed (see `app.rs`), so every served route is documented; the request
//! and answer schemas are derived from the `gapless-api` types themselves.
//! This is the document's root: its description, tags and security scheme.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The root of the document; paths are added by `app`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "gapless",
        description = "A coverage ledger for time-partitioned data: record which interval each output covers, ask whether a range is complete and which gaps are missing. Answers have the shapes of the command line's `--json` output (SPEC §3, §4).",
    ),
    modifiers(&BearerAuth),
    components(schemas(gapless_api::ErrorBody, gapless_api::IntervalSchema)),
    tags(
        (name = "events", description = "Recording events"),
        (name = "questions", description = "Coverage, windows, segments, events, frontier"),
        (name = "assets", description = "The assets and their declarations"),
        (name = "rules", description = "Rules, their firings, and waiting for a range to complete"),
        (name = "operations", description = "Health, metrics, this document"),
    )
)]
pub(crate) struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}
