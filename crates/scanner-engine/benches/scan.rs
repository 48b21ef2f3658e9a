//! Single-thread scan throughput of the built-in rule set, against
//! (a) an Aho-Corasick-only pass with the same keywords (the floor) and
//! (b) a naive baseline running every rule's regex over the whole buffer
//! (on a slice of the corpus: it is orders of magnitude slower).
//!
//! `SCANNER_BENCH_MB` sets the corpus size (default 32);
//! `SCANNER_BENCH_NAIVE_MB` the naive slice (default 2).
//!
//! ```text
//! cargo bench -p scanner-engine --bench scan
//! ```

mod common;

use std::time::Duration;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use scanner_engine::Engine;

fn bench(c: &mut Criterion) {
    let files = common::corpus(common::corpus_bytes());
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    let engine = Engine::builtin().expect("built-in rules");
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(engine.keywords())
        .unwrap();

    // Sanity: what the engine finds in the corpus (printed once).
    let mut scratch = engine.new_scratch();
    let mut out = Vec::new();
    for (path, data) in &files {
        common::scan_into(&engine, &mut scratch, data, path, &mut out);
    }
    let hits: usize = files
        .iter()
        .map(|(_, d)| ac.find_overlapping_iter(d.as_slice()).count())
        .sum();
    eprintln!(
        "corpus: {} files, {:.1} MB, {} keyword hits, {} findings, {} rules",
        files.len(),
        total as f64 / 1e6,
        hits,
        out.len(),
        engine.rules().len()
    );
    let mut by_rule = std::collections::BTreeMap::new();
    for f in &out {
        *by_rule.entry(f.rule_id.to_string()).or_insert(0) += 1;
    }
    eprintln!("findings by rule: {by_rule:?}");

    // The ratio that matters, robust to a noisy machine: both passes
    // interleaved, best of five each.
    let (mut best_engine, mut best_ac) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        let t = std::time::Instant::now();
        out.clear();
        for (path, data) in &files {
            common::scan_into(&engine, &mut scratch, data, path, &mut out);
        }
        best_engine = best_engine.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        let mut n = 0;
        for (_, data) in &files {
            n += ac.find_overlapping_iter(data.as_slice()).count();
        }
        black_box(n);
        best_ac = best_ac.min(t.elapsed().as_secs_f64());
    }
    eprintln!(
        "interleaved best of 5: engine {:.0} MB/s, aho-corasick only {:.0} MB/s, ratio {:.2}",
        total as f64 / 1e6 / best_engine,
        total as f64 / 1e6 / best_ac,
        best_ac / best_engine
    );
    // What the keyword_lead inference buys, in the same run: the engine
    // with every window starting max_len before its hit.
    let mut b = scanner_engine::EngineBuilder::new().no_lead_inference(true);
    for f in scanner_engine::RuleFile::try_builtin().expect("built-in rules") {
        b = b.add(f);
    }
    let no_lead = b.build().expect("built-in rules").0;
    let mut no_lead_scratch = no_lead.new_scratch();
    let mut best_no_lead = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        out.clear();
        for (path, data) in &files {
            common::scan_into(&no_lead, &mut no_lead_scratch, data, path, &mut out);
        }
        best_no_lead = best_no_lead.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        out.clear();
        for (path, data) in &files {
            common::scan_into(&engine, &mut scratch, data, path, &mut out);
        }
        best_engine = best_engine.min(t.elapsed().as_secs_f64());
    }
    eprintln!(
        "interleaved best of 5: engine {:.0} MB/s, without lead inference {:.0} MB/s \
         (ratios to aho-corasick only: {:.2} vs {:.2})",
        total as f64 / 1e6 / best_engine,
        total as f64 / 1e6 / best_no_lead,
        best_ac / best_engine,
        best_ac / best_no_lead
    );

    // What decoding (base64/hex/percent runs, split literals) costs, in the
    // same run: the engine with decode_depth(0) against the default, on the
    // generated corpus and, if SCANNER_BENCH_SRC names a directory, on up
    // to SCANNER_BENCH_SRC_MB (default 8) of real files from it.
    let mut b = scanner_engine::EngineBuilder::new().decode_depth(0);
    for f in scanner_engine::RuleFile::try_builtin().expect("built-in rules") {
        b = b.add(f);
    }
    let no_decode = b.build().expect("built-in rules").0;
    let mut src = vec![("generated".to_string(), files.clone())];
    if let Ok(dir) = std::env::var("SCANNER_BENCH_SRC") {
        let mb: usize = std::env::var("SCANNER_BENCH_SRC_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(8);
        src.push((dir.clone(), read_tree(std::path::Path::new(&dir), mb << 20)));
    }
    for (name, set) in &src {
        let bytes: usize = set.iter().map(|(_, d)| d.len()).sum();
        let mut no_decode_scratch = no_decode.new_scratch();
        let (mut on, mut off) = (f64::MAX, f64::MAX);
        let (mut n_on, mut n_off) = (0, 0);
        for _ in 0..5 {
            let t = std::time::Instant::now();
            out.clear();
            for (path, data) in set {
                common::scan_into(&no_decode, &mut no_decode_scratch, data, path, &mut out);
            }
            off = off.min(t.elapsed().as_secs_f64());
            n_off = out.len();
            let t = std::time::Instant::now();
            out.clear();
            for (path, data) in set {
                common::scan_into(&engine, &mut scratch, data, path, &mut out);
            }
            on = on.min(t.elapsed().as_secs_f64());
            n_on = out.len();
        }
        eprintln!(
            "decoding, {name} ({} files, {:.1} MB): off {:.0} MB/s ({n_off} findings), \
             on {:.0} MB/s ({n_on} findings), time ratio on/off {:.3}",
            set.len(),
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / off,
            bytes as f64 / 1e6 / on,
            on / off
        );
    }

    let mut g = c.benchmark_group("scan");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(total as u64));
    g.bench_function("aho_corasick_only", |b| {
        b.iter(|| {
            let mut n = 0;
            for (_, data) in &files {
                n += ac.find_overlapping_iter(data.as_slice()).count();
            }
            black_box(n)
        })
    });
    g.bench_function("engine", |b| {
        b.iter(|| {
            out.clear();
            for (path, data) in &files {
                common::scan_into(&engine, &mut scratch, data, path, &mut out);
            }
            black_box(out.len())
        })
    });

    let naive_mb: usize = std::env::var("SCANNER_BENCH_NAIVE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let mut slice = Vec::new();
    for (_, d) in &files {
        if slice.len() >= naive_mb << 20 {
            break;
        }
        slice.extend_from_slice(d);
    }
    g.throughput(Throughput::Bytes(slice.len() as u64));
    g.bench_function("naive_every_regex_on_slice", |b| {
        b.iter(|| black_box(engine.naive_match_count(&slice, &mut scratch)))
    });
    g.bench_function("engine_on_slice", |b| {
        b.iter(|| {
            out.clear();
            common::scan_into(&engine, &mut scratch, &slice, "slice.txt", &mut out);
            black_box(out.len())
        })
    });
    g.finish();
}

/// Up to `limit` bytes of the regular files under `dir`, in path order.
fn read_tree(dir: &std::path::Path, limit: usize) -> Vec<(String, Vec<u8>)> {
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => paths.push(p),
                _ => {}
            }
        }
    }
    paths.sort();
    let mut out = Vec::new();
    let mut total = 0;
    for p in paths {
        if total >= limit {
            break;
        }
        if let Ok(data) = std::fs::read(&p) {
            total += data.len();
            out.push((p.display().to_string(), data));
        }
    }
    out
}

criterion_group!(benches, bench);
criterion_main!(benches);
