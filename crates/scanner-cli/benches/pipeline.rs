//! The whole pipeline (walker, budget, workers, engine, sink) on a generated
//! tree, without the binary: `cargo bench -p scanner-cli --bench pipeline`.
//! Compares 1 and 2 workers in the same run; `SCANNER_BENCH_MB` sizes the
//! tree (default 16).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scanner_cli::input::Source;
use scanner_cli::output::{Format, Sink, SinkOptions};
use scanner_cli::pipeline::{self, ScanOptions, StopHandle};
use scanner_engine::Engine;

/// A tree of source-like text files with a token every ~100 KB.
fn tree(mb: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let line = b"    let value = compute(input, &config.options)?; // a comment\n";
    let mut x = 0x9E37_79B9u32;
    for i in 0..mb * 16 {
        let sub = dir.path().join(format!("d{}", i % 16));
        std::fs::create_dir_all(&sub).unwrap();
        let mut f = std::fs::File::create(sub.join(format!("f{i}.rs"))).unwrap();
        for j in 0..1000 {
            if j == 500 {
                let body: String = (0..36)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        (b'a' + (x % 26) as u8) as char
                    })
                    .collect();
                writeln!(f, "const T: &str = \"{}{}\";", ["gh", "p_"].concat(), body).unwrap();
            }
            f.write_all(line).unwrap();
        }
    }
    dir
}

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("SCANNER_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let dir = tree(mb);
    let engine = Arc::new(Engine::builtin().unwrap());
    let bytes: u64 = walkdir_bytes(dir.path().to_path_buf());
    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10).throughput(Throughput::Bytes(bytes));
    for threads in [1, 2] {
        g.bench_function(format!("{threads} worker(s)"), |b| {
            b.iter(|| {
                let sink = Sink::new(
                    SinkOptions {
                        format: Format::Json,
                        show_secrets: false,
                        color: false,
                    },
                    Box::new(std::io::sink()),
                );
                let opts = ScanOptions {
                    threads,
                    ..ScanOptions::default()
                };
                let source = Source::Paths(vec![dir.path().to_path_buf()]);
                let stop = StopHandle::default();
                let (report, _) =
                    pipeline::scan(source, Arc::clone(&engine), sink, Vec::new(), &opts, &stop)
                        .unwrap();
                assert!(report.findings > 0);
            })
        });
    }
    g.finish();
}

fn walkdir_bytes(dir: PathBuf) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = e.metadata().unwrap();
        total += if md.is_dir() {
            walkdir_bytes(e.path())
        } else {
            md.len()
        };
    }
    total
}

criterion_group!(benches, bench);
criterion_main!(benches);
