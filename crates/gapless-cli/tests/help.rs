//! `--help` offers each command only the flags it takes: `serve` runs a ledger and never works against a server, so its help
//! has no `--url`; the commands that work over a server do, and `--url`
//! works before the command, after it and from `GAPLESS_URL`.

mod common;

use common::{Gapless, Server};

fn help(g: &Gapless, args: &[&str]) -> String {
    let out = g.run(args, None);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    out.stdout
}

#[test]
fn serve_help_has_no_client_flags_and_client_commands_do() {
    let g = Gapless::new();
    let serve = help(&g, &["serve", "--help"]);
    assert!(serve.contains("--listen"), "{serve}");
    assert!(serve.contains("--db"), "{serve}");
    for client_only in ["--url", "GAPLESS_URL"] {
        assert!(
            !serve.contains(client_only),
            "serve --help offers {client_only}:\n{serve}"
        );
    }
    // GAPLESS_TOKEN (the client's), not GAPLESS_TOKENS (the server's).
    assert!(
        !serve
            .match_indices("GAPLESS_TOKEN")
            .any(|(i, m)| !serve[i + m.len()..].starts_with('S')),
        "serve --help offers GAPLESS_TOKEN:\n{serve}"
    );
    for command in [
        &["emit"][..],
        &["ingest"],
        &["check"],
        &["windows"],
        &["segments"],
        &["events"],
        &["frontier"],
        &["assets"],
        &["asset", "set"],
        &["asset", "show"],
        &["asset", "list"],
        &["rule", "set"],
        &["rule", "show"],
        &["rule", "delete"],
        &["rule", "list"],
        &["rules"],
        &["firings"],
        &["wait"],
        &["prune"],
    ] {
        let mut args = command.to_vec();
        args.push("--help");
        let text = help(&g, &args);
        assert!(
            text.contains("--url"),
            "{command:?} --help has no --url:\n{text}"
        );
        assert!(text.contains("GAPLESS_URL"), "{command:?} --help:\n{text}");
    }
    // The top level still names it (it is accepted before the command).
    assert!(help(&g, &["--help"]).contains("--url"));

    // After serve, --url is not a flag of it; before serve it is refused.
    let out = g.run(&["serve", "--url", "http://127.0.0.1:1"], None);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--url"), "{}", out.stderr);
    let out = g.run(&["--url", "http://127.0.0.1:1", "serve"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--url makes no sense"),
        "{}",
        out.stderr
    );
}

#[test]
fn url_works_before_the_command_after_it_and_from_the_environment() {
    let g = Gapless::new();
    let out = g.run(&["asset", "set", "orders"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let server = Server::start(&g);
    // Another directory: no ledger there, so only the server can answer.
    let elsewhere = Gapless::new();
    for args in [
        vec![
            "--url",
            server.url.as_str(),
            "asset",
            "show",
            "orders",
            "--json",
        ],
        vec![
            "asset",
            "show",
            "orders",
            "--url",
            server.url.as_str(),
            "--json",
        ],
    ] {
        let out = elsewhere.run(&args, None);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains("\"orders\""), "{}", out.stdout);
    }
    let mut env = Gapless::new();
    env.url = Some(server.url.clone());
    let out = env.run(&["asset", "show", "orders", "--json"], None);
    assert_eq!(out.code, 0, "GAPLESS_URL: {}", out.stderr);
}
