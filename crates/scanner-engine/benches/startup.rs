//! Startup: load + parse + compile of the full built-in rule set, paid on
//! every pre-commit run. Regexes compile lazily on their rule's first
//! keyword hit; `eager` shows what compiling all of them up front costs.
//!
//! ```text
//! cargo bench -p scanner-engine --bench startup
//! ```

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use scanner_engine::{EngineBuilder, RuleFile};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("startup");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("parse_only", |b| b.iter(|| black_box(RuleFile::builtin())));
    g.bench_function("builtin_lazy", |b| {
        b.iter(|| {
            let mut builder = EngineBuilder::new();
            for f in RuleFile::builtin() {
                builder = builder.add(f);
            }
            black_box(builder.build().unwrap())
        })
    });
    g.bench_function("builtin_eager", |b| {
        b.iter(|| {
            let mut builder = EngineBuilder::new().eager(true);
            for f in RuleFile::builtin() {
                builder = builder.add(f);
            }
            black_box(builder.build().unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
