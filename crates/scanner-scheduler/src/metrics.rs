//! Per-worker counters, merged into one snapshot by [`Executor::join`].
//!
//! [`Executor::join`]: crate::Executor::join

use std::time::Duration;

/// Counters of one worker. Each worker owns its copy (no shared cache lines
/// on the hot path) and hands it back when its thread ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerMetrics {
    /// Tasks popped from the worker's own deque (LIFO).
    pub tasks_local: u64,
    /// Tasks taken from the global injector (external spawns, `spawn_global`).
    pub tasks_injector: u64,
    /// Tasks stolen from a sibling's deque (FIFO end).
    pub tasks_stolen: u64,
    /// Steal probes of a sibling's deque, successful or not.
    pub steal_attempts: u64,
    /// Probes that returned a task.
    pub steal_successes: u64,
    /// Times the worker parked its thread.
    pub parks: u64,
    /// Tasks dropped unrun because the pool was shut down (or a task
    /// panicked) while they were queued.
    pub tasks_dropped: u64,
    /// Thread lifetime minus `idle`: running tasks, and finding the next one
    /// when it was found at the first try.
    pub busy: Duration,
    /// Time in idle episodes: from the first search that found nothing to
    /// the next task (spinning, yielding, parked), plus start-up. Timed per
    /// episode, so a run of local tasks costs no clock reads.
    pub idle: Duration,
}

impl WorkerMetrics {
    /// Tasks run, whatever their source.
    pub fn tasks(&self) -> u64 {
        self.tasks_local + self.tasks_injector + self.tasks_stolen
    }

    fn add(&mut self, o: &WorkerMetrics) {
        self.tasks_local += o.tasks_local;
        self.tasks_injector += o.tasks_injector;
        self.tasks_stolen += o.tasks_stolen;
        self.steal_attempts += o.steal_attempts;
        self.steal_successes += o.steal_successes;
        self.parks += o.parks;
        self.tasks_dropped += o.tasks_dropped;
        self.busy += o.busy;
        self.idle += o.idle;
    }
}

/// Metrics of all workers, merged on `join`. `workers[i]` is worker `i`.
#[derive(Clone, Debug, Default)]
pub struct MetricsSnapshot {
    pub workers: Vec<WorkerMetrics>,
    /// Wall time from `Executor::new` to the end of `join`.
    pub wall: Duration,
}

impl MetricsSnapshot {
    /// Sum over workers.
    pub fn total(&self) -> WorkerMetrics {
        let mut t = WorkerMetrics::default();
        for w in &self.workers {
            t.add(w);
        }
        t
    }

    /// Busy time over (workers x wall time), in 0..=1. Includes thread start
    /// and join in the wall time, so a run of a few microseconds reads low.
    pub fn utilization(&self) -> f64 {
        let denom = self.wall.as_secs_f64() * self.workers.len() as f64;
        if denom <= 0.0 {
            return 0.0;
        }
        (self.total().busy.as_secs_f64() / denom).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_and_utilization() {
        let w = |busy_ms, local| WorkerMetrics {
            tasks_local: local,
            tasks_stolen: 1,
            busy: Duration::from_millis(busy_ms),
            ..WorkerMetrics::default()
        };
        let s = MetricsSnapshot {
            workers: vec![w(50, 3), w(100, 4)],
            wall: Duration::from_millis(100),
        };
        let t = s.total();
        assert_eq!(t.tasks(), 9);
        assert_eq!(t.busy, Duration::from_millis(150));
        assert!((s.utilization() - 0.75).abs() < 1e-9);
        assert_eq!(MetricsSnapshot::default().utilization(), 0.0);
    }
}
