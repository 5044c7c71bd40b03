//! The web page (SPEC §11): served without a token even when the server has
//! tokens, with a strict Content-Security-Policy and the right content
//! types, every file it references served, while the API still asks for a
//! token.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use gapless_server::{app, AppState, ServerConfig, Tokens};
use tower::ServiceExt;

mod common;

const READER: &str = "reader-secret-0123456789";

fn router(dir: &tempfile::TempDir) -> axum::Router {
    let ledger = common::ledger_at(&dir.path().join("l.db"));
    let tokens = Tokens::parse(&format!(
        "[[token]]\nsecret = \"{READER}\"\nscopes = [\"read\"]\n"
    ))
    .unwrap();
    app(AppState::new(
        ledger,
        ServerConfig {
            tokens: Some(tokens),
            ..ServerConfig::default()
        },
    ))
}

struct Answer {
    status: StatusCode,
    content_type: String,
    csp: String,
    body: String,
}

async fn get(router: &axum::Router, path: &str) -> Answer {
    let req = Request::builder().uri(path).body(Body::empty()).unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let header = |name: &str| {
        res.headers()
            .get(name)
            .map_or(String::new(), |v| v.to_str().unwrap().to_string())
    };
    let (content_type, csp) = (header("content-type"), header("content-security-policy"));
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        content_type,
        csp,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

/// The paths the page's HTML loads: `src="/..."` and `href="/..."`.
fn referenced(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"/", "href=\"/"] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len() - 1..];
            out.push(rest[..rest.find('"').unwrap()].to_string());
        }
    }
    out
}

#[tokio::test]
async fn the_page_needs_no_token_and_forbids_other_origins() {
    let dir = tempfile::tempdir().unwrap();
    let router = router(&dir);
    let page = get(&router, "/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    let directives: Vec<&str> = page.csp.split(';').map(str::trim).collect();
    assert!(directives.contains(&"default-src 'self'"), "{}", page.csp);
    assert!(directives.contains(&"script-src 'self'"), "{}", page.csp);
    assert!(
        !page.csp.contains("unsafe") && !page.csp.contains("http"),
        "{}",
        page.csp
    );
    assert!(page.body.contains("<script src=\"/ui/app.js\"></script>"));

    // The API beside it still wants the token the page asks for.
    assert_eq!(
        get(&router, "/v1/assets").await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn every_file_the_page_loads_is_served_with_its_content_type() {
    let dir = tempfile::tempdir().unwrap();
    let router = router(&dir);
    let files = referenced(&get(&router, "/").await.body);
    let expected = [
        ("/ui/app.js", "text/javascript; charset=utf-8"),
        ("/ui/style.css", "text/css; charset=utf-8"),
        ("/ui/icon.svg", "image/svg+xml"),
    ];
    let mut linked: Vec<&str> = files.iter().map(String::as_str).collect();
    linked.sort_unstable();
    let mut served: Vec<&str> = expected.iter().map(|(p, _)| *p).collect();
    served.sort_unstable();
    assert_eq!(linked, served, "the page links exactly its served files");
    for (path, content_type) in expected {
        let file = get(&router, path).await;
        assert_eq!(file.status, StatusCode::OK, "{path}");
        assert_eq!(file.content_type, content_type, "{path}");
        assert!(file.csp.contains("default-src 'self'"), "{path}");
        assert!(!file.body.is_empty(), "{path}");
    }
    // Other paths under /ui/ are not files of the page.
    let missing = get(&router, "/ui/nothing.js").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.content_type.starts_with("application/json"));
}
