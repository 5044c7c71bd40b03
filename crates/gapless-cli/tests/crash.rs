//! Crash safety: `gapless ingest` killed with SIGKILL at random moments never
//! loses an acknowledged batch, never leaves part of a batch, and the kept
//! coverage state always equals a recomputation from the event log.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::Gapless;
use gapless_core::{Coverage, EventKind, Interval};
use serde_json::Value;

/// A small deterministic generator: the test must not depend on a seed file.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const BATCH: usize = 4_000;
const ROUNDS: usize = 30;
const DAY0: i64 = 1_748_736_000_000_000; // 2025-06-01T00:00:00Z in µs

fn batch_text(round: usize, rng: &mut XorShift) -> String {
    let mut text = String::new();
    for j in 0..BATCH {
        // Overlapping minute-aligned slices over ten days, a few retracted.
        let start = DAY0 + rng.below(10 * 1440) as i64 * 60_000_000;
        let end = start + (1 + rng.below(30)) as i64 * 60_000_000;
        let kind = if rng.below(10) == 0 {
            "retracted"
        } else {
            "landed"
        };
        let iv = Interval::from_micros(start, end).unwrap();
        text.push_str(&format!(
            "{{\"asset\":\"crash\",\"id\":\"r{round}-{j}\",\"start\":\"{}\",\"end\":\"{}\",\"kind\":\"{kind}\"}}\n",
            iv.start(),
            iv.end()
        ));
    }
    text
}

fn all_events(g: &Gapless) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec![
            "events".to_string(),
            "crash".into(),
            "--json".into(),
            "--limit".into(),
            "10000".into(),
        ];
        if let Some(a) = &after {
            args.extend(["--after".into(), a.clone()]);
        }
        let out = g.run(&args, None);
        assert_eq!(out.code, 0, "events: {}", out.stderr);
        let page = out.json();
        events.extend(page["events"].as_array().unwrap().iter().cloned());
        match page["next"].as_str() {
            Some(n) => after = Some(n.to_string()),
            None => return events,
        }
    }
}

#[test]
fn sigkill_during_ingest_loses_nothing_acknowledged_and_leaves_no_partial_batch() {
    let g = Gapless::new();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut acknowledged = Vec::new();
    let mut killed = 0;
    // Kill at a random moment within twice the time a whole batch takes on
    // this machine now (measured on a throwaway ledger), so that about half
    // the rounds are cut short and half finish, however loaded the machine.
    let whole = {
        let probe = Gapless::new();
        let path = probe.dir.path().join("probe.ndjson");
        std::fs::write(&path, batch_text(0, &mut XorShift(1))).unwrap();
        let started = std::time::Instant::now();
        let out = probe.run(&["ingest", path.to_str().unwrap()], None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        started.elapsed()
    };
    let window_ms = (2 * whole.as_millis()).max(20) as u64;
    for round in 0..ROUNDS {
        let path = g.dir.path().join(format!("batch-{round}.ndjson"));
        std::fs::write(&path, batch_text(round, &mut rng)).unwrap();
        let mut child = g
            .command()
            .args(["ingest", path.to_str().unwrap(), "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(window_ms)));
        let finished = child.try_wait().unwrap().is_some();
        if !finished {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(answer["accepted"], BATCH as u64, "round {round}");
            acknowledged.push(round);
        }
    }
    assert!(
        killed > 0 && !acknowledged.is_empty(),
        "the test must both kill and let finish ({killed} of {ROUNDS} killed, window {window_ms} ms)"
    );

    let events = all_events(&g);
    let mut per_round = vec![0usize; ROUNDS];
    for e in &events {
        let id = e["id"].as_str().unwrap();
        let round: usize = id[1..id.find('-').unwrap()].parse().unwrap();
        per_round[round] += 1;
    }
    for (round, &n) in per_round.iter().enumerate() {
        assert!(
            n == 0 || n == BATCH,
            "round {round} is partially stored: {n} of {BATCH}"
        );
        if acknowledged.contains(&round) {
            assert_eq!(n, BATCH, "round {round} was acknowledged but is missing");
        }
    }

    // The coverage kept with each commit equals the event log replayed.
    let mut replay = Coverage::new();
    let mut seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "events come in sequence order"
    );
    seqs.dedup();
    for e in &events {
        let iv: Interval =
            serde_json::from_value(serde_json::json!({"start": e["start"], "end": e["end"]}))
                .unwrap();
        let kind = if e["kind"] == "retracted" {
            EventKind::Retracted
        } else {
            EventKind::Landed
        };
        replay.apply(kind, iv);
    }
    let range = Interval::from_micros(DAY0 - 86_400_000_000, DAY0 + 12 * 86_400_000_000).unwrap();
    let out = g.run(
        &[
            "check",
            "crash",
            "--start",
            &range.start().to_string(),
            "--end",
            &range.end().to_string(),
            "--json",
        ],
        None,
    );
    let kept: Vec<Interval> = serde_json::from_value(out.json()["missing"].clone()).unwrap();
    assert_eq!(
        kept,
        replay.report(range).missing,
        "kept coverage differs from the replayed log"
    );
}
