//! Access control: the matrix of routes and tokens through the router
//! (`oneshot`), then refused writes over a real socket storing nothing, and
//! an open server refusing a non-loopback address.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{at, enc, event, TestServer};
use gapless_server::{app, AppState, ServerConfig, ServerError, Tokens};
use serde_json::{json, Value};
use tower::ServiceExt;

const READER: &str = "reader-secret-0123456789";
const WRITER: &str = "writer-secret-0123456789";
const WRITER_ALL: &str = "writer-all-secret-0123456789";
const ADMIN: &str = "admin-secret-0123456789";

fn tokens() -> Tokens {
    Tokens::parse(&format!(
        r#"
[[token]]
name = "reader"
secret = "{READER}"
scopes = ["read"]

[[token]]
name = "team-a producer"
secret = "{WRITER}"
scopes = ["write"]
prefixes = ["team-a/", "s3://lake/a/"]

[[token]]
secret = "{WRITER_ALL}"
scopes = ["write", "read"]

[[token]]
secret = "{ADMIN}"
scopes = ["admin"]
"#
    ))
    .unwrap()
}

async fn call(
    router: &axum::Router,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value, Option<String>) {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string())),
        None => req.body(Body::empty()),
    }
    .unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let www = res
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value, www)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scope_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = common::ledger_at(&dir.path().join("l.db"));
    // Known to the ledger, so that its questions answer 200 (an unseen
    // asset is 404, whatever the token).
    gapless_api::Ask::declare(
        &ledger,
        &gapless_api::DeclareRequest {
            asset: "team-a/orders".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let state = AppState::new(
        ledger,
        ServerConfig {
            tokens: Some(tokens()),
            ..ServerConfig::default()
        },
    );
    let router = app(state);
    let range = "start=2025-06-01&end=2025-06-02";
    let a_event = event("team-a/orders", &at(0), &at(5), None);
    let b_event = event("team-b/orders", &at(0), &at(5), None);
    let multi = json!({"assets": ["team-a/orders"], "start": "2025-06-01", "end": "2025-06-02"});
    let buckets_many =
        json!({"assets": [{"asset": "team-a/orders", "start": "2025-06-01", "end": "2025-06-02"}]});
    let decl = json!({"tz": "UTC"});

    // (method, path, body, [none, wrong, reader, writer, writer_all, admin])
    let q = |p: &str| format!("/v1/assets/team-a%2Forders/{p}");
    let rows: Vec<(&str, String, Option<Value>, [u16; 6])> = vec![
        (
            "GET",
            "/healthz".into(),
            None,
            [200, 200, 200, 200, 200, 200],
        ),
        (
            "GET",
            "/v1/assets".into(),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "GET",
            q(&format!("coverage?{range}")),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "GET",
            q(&format!("windows?{range}&every=1h")),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "GET",
            q(&format!("segments?{range}")),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        ("GET", q("events"), None, [401, 401, 200, 403, 200, 200]),
        (
            "GET",
            q("frontier?origin=2025-06-01"),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "POST",
            "/v1/coverage".into(),
            Some(multi),
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "POST",
            "/v1/buckets".into(),
            Some(buckets_many),
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "GET",
            "/metrics".into(),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "GET",
            "/openapi.json".into(),
            None,
            [401, 401, 200, 403, 200, 200],
        ),
        (
            "POST",
            "/v1/events".into(),
            Some(a_event),
            [401, 401, 403, 200, 200, 200],
        ),
        (
            "POST",
            "/v1/events".into(),
            Some(b_event),
            [401, 401, 403, 403, 200, 200],
        ),
        (
            // Any writer: an asset outside its prefixes is skipped, not 403.
            "POST",
            "/api/v1/lineage".into(),
            Some(json!({"eventType": "COMPLETE", "run": {"runId": "r"},
                        "job": {"namespace": "n", "name": "j"}, "outputs": []})),
            [401, 401, 403, 200, 200, 200],
        ),
        (
            "PUT",
            "/v1/assets/team-a%2Forders".into(),
            Some(decl),
            [401, 401, 403, 403, 403, 200],
        ),
        (
            "POST",
            "/v1/prune".into(),
            Some(json!({"before": "2025-01-01"})),
            [401, 401, 403, 403, 403, 200],
        ),
    ];
    let auths = [
        None,
        Some("Bearer wrong-secret-0123456789".to_string()),
        Some(format!("Bearer {READER}")),
        Some(format!("Bearer {WRITER}")),
        Some(format!("Bearer {WRITER_ALL}")),
        Some(format!("Bearer {ADMIN}")),
    ];
    for (method, path, body, expected) in rows {
        for (auth, want) in auths.iter().zip(expected) {
            let (status, value, www) =
                call(&router, method, &path, auth.as_deref(), body.clone()).await;
            let who = auth.as_deref().map_or("no token", |a| &a[7..13]);
            assert_eq!(status.as_u16(), want, "{method} {path} with {who}: {value}");
            if want >= 400 {
                assert!(
                    value["error"].is_string() && value.get("detail").is_some(),
                    "{value}"
                );
            }
            if want == 401 {
                assert_eq!(www.as_deref(), Some("Bearer"));
            }
            let text = value.to_string();
            for secret in [READER, WRITER, WRITER_ALL, ADMIN] {
                assert!(!text.contains(secret), "a secret leaked: {text}");
            }
        }
    }

    // The scheme is case-insensitive; other schemes are refused.
    let (s, _, _) = call(
        &router,
        "GET",
        "/v1/assets",
        Some(&format!("bearer {READER}")),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, v, _) = call(
        &router,
        "GET",
        "/v1/assets",
        Some(&format!("Basic {READER}")),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{v}");
    let (s, _, _) = call(
        &router,
        "GET",
        "/v1/assets",
        Some(&format!("Bearer {READER}x")),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[test]
fn writes_outside_a_tokens_scope_store_nothing() {
    let server = TestServer::with_tokens(tokens());
    let writer = server.client_with(WRITER);
    let admin = server.client_with(ADMIN);

    // One event outside the prefixes refuses the whole array, naming it.
    let r = writer.post_json(
        "/v1/events",
        &json!([
            event("team-a/orders", &at(0), &at(5), None),
            event("s3://lake/a/x", &at(0), &at(5), None),
            event("team-b/orders", &at(0), &at(5), None),
        ]),
    );
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        r.error().starts_with("event 3: ") && r.error().contains("team-b/orders"),
        "{}",
        r.text()
    );
    assert_eq!(r.json()["detail"]["event"], 3);

    // The same in NDJSON names the line.
    let body = format!(
        "{}\n\n{}\n",
        event("team-a/orders", &at(0), &at(5), None),
        event("other", &at(0), &at(5), None)
    );
    let r = writer.post_ndjson("/v1/events", &body);
    assert_eq!(r.status, 403);
    assert!(r.error().starts_with("line 3: "), "{}", r.text());

    // Read-only and unauthenticated writes, a declaration by a writer.
    let r = server
        .client_with(READER)
        .post_json("/v1/events", &event("team-a/orders", &at(0), &at(5), None));
    assert_eq!(r.status, 403);
    let r = server
        .client()
        .post_json("/v1/events", &event("team-a/orders", &at(0), &at(5), None));
    assert_eq!(r.status, 401);
    let r = server
        .client_with("not-a-token-at-all-000")
        .post_json("/v1/events", &event("team-a/x", &at(0), &at(5), None));
    assert_eq!(r.status, 401);
    let r = writer.put_json(
        &format!("/v1/assets/{}", enc("team-a/orders")),
        &json!({"key_span": "PT5M"}),
    );
    assert_eq!(r.status, 403);

    // Nothing of any of it is stored, nor declared.
    assert_eq!(admin.get("/v1/assets").json()["assets"], json!([]));

    // Inside the prefixes it works.
    let r = writer.post_json(
        "/v1/events",
        &json!([
            event("team-a/orders", &at(0), &at(5), None),
            event("s3://lake/a/x", &at(0), &at(5), None)
        ]),
    );
    assert_eq!(
        r.json(),
        json!({"accepted": 2, "duplicates": 0}),
        "{}",
        r.text()
    );
    assert_eq!(
        admin.get("/v1/assets").json()["assets"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// The test PostgreSQL server (`GAPLESS_TEST_PG`, required when set) and a
/// fresh schema on it, dropped on drop; `None` when it is not reachable.
struct PgSchema {
    url: String,
    name: String,
}

impl PgSchema {
    fn new() -> Option<PgSchema> {
        let set = std::env::var("GAPLESS_TEST_PG").ok();
        let url = set
            .clone()
            .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".to_string());
        if let Err(e) = postgres::Client::connect(&url, postgres::NoTls) {
            assert!(set.is_none(), "PostgreSQL at {url} is not reachable: {e}");
            eprintln!("PostgreSQL skipped: none at {url} ({e}); set GAPLESS_TEST_PG");
            return None;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!("gs_auth_{}_{nanos}", std::process::id());
        Some(PgSchema { url, name })
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.url, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
        }
    }
}

/// The answer about an asset outside a writer's prefixes is 403 whatever
/// else is wrong with its event: a discrete key of an asset that declares
/// no key span (400 inside the prefixes), a bad instant, a bad declaration.
/// Single events and batches (small ones parsed on the request's thread,
/// large ones on a blocking thread), on SQLite and PostgreSQL; nothing is
/// stored.
#[test]
fn a_writer_learns_nothing_of_assets_outside_its_prefixes() {
    let schema = PgSchema::new();
    let dir = tempfile::tempdir().unwrap();
    let mut ledgers = vec![("sqlite", common::ledger_at(&dir.path().join("l.db")))];
    if let Some(s) = &schema {
        let store = gapless_store::PostgresStore::open_in_schema(&s.url, &s.name).unwrap();
        ledgers.push((
            "postgres",
            gapless_ledger::Ledger::new(std::sync::Arc::new(store)),
        ));
    }
    for (backend, ledger) in ledgers {
        let server = TestServer::with_ledger(
            tempfile::tempdir().unwrap(),
            ledger,
            ServerConfig {
                tokens: Some(tokens()),
                ..ServerConfig::default()
            },
        );
        let writer = server.client_with(WRITER);
        let admin = server.client_with(ADMIN);
        let r = admin.put_json(
            &format!("/v1/assets/{}", enc("team-b/declared")),
            &json!({"key_span": "PT5M"}),
        );
        assert_eq!(r.status, 200, "{backend}: {}", r.text());
        let key = |asset: &str| json!({"asset": asset, "partition_key": "2025-06-01T10:05:00Z"});
        let outside = |asset: &str| {
            format!("this token may not write asset {asset:?}: it is outside the token's prefixes")
        };

        // Single events.
        for (body, asset) in [
            (key("team-b/undeclared"), "team-b/undeclared"),
            (key("team-b/declared"), "team-b/declared"),
            (
                json!({"asset": "team-b/x", "start": "soon", "end": 5}),
                "team-b/x",
            ),
        ] {
            let r = writer.post_json("/v1/events", &body);
            assert_eq!(r.status, 403, "{backend}: {body}: {}", r.text());
            assert_eq!(r.error(), outside(asset), "{backend}");
            assert_eq!(r.json()["detail"], json!({"asset": asset}), "{backend}");
        }
        // Inside the prefixes the event is judged as ever.
        let r = writer.post_json("/v1/events", &key("team-a/undeclared"));
        assert_eq!(r.status, 400, "{backend}: {}", r.text());
        assert!(r.error().contains("key span"), "{backend}: {}", r.text());

        // A batch: a bad event inside the prefixes before one outside.
        let body = format!(
            "{}\n{}\n{}\n",
            event("team-a/orders", &at(0), &at(5), None),
            event("team-a/orders", &at(5), "not an instant", None),
            key("team-b/undeclared"),
        );
        let r = writer.post_ndjson("/v1/events", &body);
        assert_eq!(r.status, 403, "{backend}: {}", r.text());
        assert_eq!(
            r.error(),
            format!("line 3: {}", outside("team-b/undeclared")),
            "{backend}"
        );
        assert_eq!(
            r.json()["detail"],
            json!({"line": 3, "asset": "team-b/undeclared"})
        );
        // A large array, parsed off the request's thread, the same.
        let mut items = vec![key("team-a/undeclared")];
        items.extend((0..300).map(|i| {
            event(
                "team-a/orders",
                &at(i % 59),
                &at(i % 59 + 1),
                Some(&format!("e{i}")),
            )
        }));
        items.push(key("team-b/undeclared"));
        let r = writer.post_json("/v1/events", &Value::Array(items));
        assert_eq!(r.status, 403, "{backend}: {}", r.text());
        assert_eq!(
            r.error(),
            format!("event 302: {}", outside("team-b/undeclared")),
            "{backend}"
        );

        // Declarations and rules: the scope before the body.
        let r = writer.put_json(
            &format!("/v1/assets/{}", enc("team-b/x")),
            &json!({"key_span": 5}),
        );
        assert_eq!(r.status, 403, "{backend}: {}", r.text());
        let r = writer.put_json("/v1/rules/no%20such%20name", &json!({"every": 5}));
        assert_eq!(r.status, 403, "{backend}: {}", r.text());

        // Nothing stored but the declaration.
        let assets = admin.get("/v1/assets").json();
        let names: Vec<&str> = assets["assets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["asset"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["team-b/declared"], "{backend}: {assets}");
    }
}

#[test]
fn an_open_server_refuses_a_non_loopback_address() {
    // `run` refuses before binding.
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "0.0.0.0:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let err = gapless_server::run(common::ledger_at(&dir.path().join("l.db")), config).unwrap_err();
    assert!(matches!(err, ServerError::Config(_)), "{err}");
    assert!(
        err.to_string()
            .contains("refusing to listen on 0.0.0.0:0 without access tokens"),
        "{err}"
    );

    // `serve` refuses a listener that is not on loopback.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let state = AppState::new(
            common::ledger_at(&dir.path().join("l.db")),
            ServerConfig::default(),
        );
        gapless_server::serve(listener, state, std::future::pending())
            .await
            .unwrap_err()
    });
    assert!(err.to_string().contains("without access tokens"), "{err}");
}
