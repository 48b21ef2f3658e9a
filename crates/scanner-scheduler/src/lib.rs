//! Work-stealing executor for scanner.
//!
//! (Handbook written below in a later step.)

mod budget;
mod executor;
mod idle;
mod loom;
mod metrics;
mod rng;
mod state;

pub use budget::{Budget, Permit};
pub use executor::{Executor, ExecutorConfig, ExecutorHandle, Spawner, TaskPanic, WorkerCtx};
pub use metrics::{MetricsSnapshot, WorkerMetrics};
