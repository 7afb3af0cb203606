//! How workers read in tool results: one line per worker in lists, a header
//! plus the result for a single worker.

use crate::record::Occupancy;
use crate::{WorkerSnapshot, WorkerState};
use std::time::Duration;
use tool_core::format::cap_chars;

/// `0.4s`, `12.0s`, `2m05s`, `1h02m`.
pub(crate) fn elapsed(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else if s < 3600.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s as u64) % 60)
    } else {
        format!("{}h{:02}m", (s / 3600.0) as u64, ((s as u64) / 60) % 60)
    }
}

/// The first non-empty line of a result, capped for a list.
pub(crate) fn first_line(result: Option<&str>) -> String {
    match result.and_then(|r| r.lines().map(str::trim).find(|l| !l.is_empty())) {
        Some(l) => cap_chars(l, 100).into_owned(),
        None => "(no result yet)".to_string(),
    }
}

/// Processes listed under a running worker in vibe_list.
const LISTED_PROCESSES: usize = 8;

/// One line about a worker's last run: why it failed, or its result's
/// first line; for a queued worker, its place.
fn summary(w: &WorkerSnapshot) -> String {
    if w.state == WorkerState::Queued {
        return format!(
            "(queued, #{} in line; starts when a running worker ends)",
            w.queue_position.unwrap_or(1)
        );
    }
    match (&w.failure, w.state) {
        (Some(f), crate::WorkerState::Failed | crate::WorkerState::Lost) => first_line(Some(f)),
        _ => first_line(w.last_result.as_deref()),
    }
}

/// `2 running of at most 2; 1 queued`.
pub(crate) fn occupancy(o: Occupancy) -> String {
    let mut out = format!("{} running of at most {}", o.running, o.max_workers);
    if o.queued > 0 {
        out.push_str(&format!("; {} queued", o.queued));
    }
    out
}

/// A running worker's processes, one indented line each, capped.
pub(crate) fn processes(w: &WorkerSnapshot, indent: &str) -> String {
    let mut out = String::new();
    for p in w.processes.iter().take(LISTED_PROCESSES) {
        out.push_str(&format!(
            "{indent}pid {}  {}\n",
            p.pid,
            cap_chars(&p.command, 100)
        ));
    }
    if w.processes.len() > LISTED_PROCESSES {
        out.push_str(&format!(
            "{indent}… and {} more processes\n",
            w.processes.len() - LISTED_PROCESSES
        ));
    }
    out
}

/// The table of vibe_list, aligned, by id; under each running worker, its
/// processes.
pub(crate) fn list(workers: &[WorkerSnapshot], o: Occupancy) -> String {
    if workers.is_empty() {
        return format!(
            "vibe_list: no workers yet; start one with vibe_spawn (at most {} run at once)",
            o.max_workers
        );
    }
    let mut out = format!(
        "vibe_list: {} ({})\n",
        tool_core::format::plural(workers.len(), "worker", "workers"),
        occupancy(o)
    );
    let rows: Vec<[String; 6]> = workers
        .iter()
        .map(|w| {
            let result = summary(w);
            [
                w.id.clone(),
                cap_chars(&w.label, 40).into_owned(),
                w.tier.to_string(),
                w.state.to_string(),
                elapsed(w.elapsed),
                result,
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (r, w) in rows.iter().zip(workers) {
        let mut line = String::new();
        for (c, w) in widths.iter().enumerate() {
            line.push_str(&format!("{:<w$}  ", r[c], w = *w));
        }
        line.push_str(&r[5]);
        out.push_str(line.trim_end());
        out.push('\n');
        out.push_str(&processes(w, "    "));
    }
    out.trim_end().to_string()
}

/// `w1 "fix the tests" (fast, run 2)`.
pub(crate) fn who(w: &WorkerSnapshot) -> String {
    format!("{} \"{}\" ({}, run {})", w.id, w.label, w.tier, w.runs)
}

/// A settled worker with its result, for vibe_wait.
pub(crate) fn settled(w: &WorkerSnapshot) -> String {
    let mut out = format!("{} {} after {}", who(w), w.state, elapsed(w.elapsed));
    if let Some(f) = &w.failure {
        out.push_str(&format!(": {f}"));
    }
    match w.last_result.as_deref().map(str::trim_end) {
        Some(r) if !r.is_empty() => {
            let label = match w.state {
                crate::WorkerState::Done => "result",
                crate::WorkerState::Killed => "partial output before it was killed",
                _ => "output",
            };
            out.push_str(&format!("\n{label}:\n{r}"));
        }
        _ => out.push_str("\n(no output)"),
    }
    out
}

/// The notice announcing the end of a worker's run: its level, and one
/// line saying who, how it ended, after how long, and the first line of its
/// result or failure.
pub(crate) fn notice(w: &WorkerSnapshot) -> (tool_core::NoticeLevel, String) {
    use crate::WorkerState;
    let level = match w.state {
        WorkerState::Failed | WorkerState::Lost => tool_core::NoticeLevel::Warning,
        _ => tool_core::NoticeLevel::Info,
    };
    // A failure's first line ends at "stderr tail:"; its words follow.
    let detail = match (&w.failure, w.state) {
        (Some(f), WorkerState::Failed | WorkerState::Lost) => {
            let flat: Vec<&str> = f.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            cap_chars(&flat.join(" "), 300).into_owned()
        }
        _ => summary(w),
    };
    let text = format!(
        "worker {} {} after {}: {detail} (vibe_wait {} for all of it)",
        who(w),
        w.state,
        elapsed(w.elapsed),
        w.id
    );
    (level, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(elapsed(Duration::from_millis(420)), "0.4s");
        assert_eq!(elapsed(Duration::from_secs(125)), "2m05s");
        assert_eq!(elapsed(Duration::from_mins(62)), "1h02m");
        assert_eq!(first_line(Some("\n  all good \nmore")), "all good");
        assert_eq!(first_line(None), "(no result yet)");
    }
}
