//! CPU per step of both processes of one run: `conform run` (the harness)
//! and the server it checks, each measured in the same run from the kernel's
//! accounting (user + system time of every thread: `wait4`'s rusage of the
//! harness child, `/proc/PID/stat` of the server before and after), divided
//! by the steps the run reports. Wall time says which side waits; CPU time
//! says which side would be the bottleneck on a loaded machine or against a
//! faster server.
//!
//! ```sh
//! cargo bench -p resonate-runner --bench cpu [-- --server CMD --url URL --profile P
//!     --baseline B --seed 1 --cases 30 --steps 100 --rounds 3 --extra "FLAGS"
//!     --conform PATH[,PATH...]]
//! ```
//!
//! Defaults: the TypeScript SDK's server (`node scripts/ts-server/server.mjs
//! --port 0`, after `npm ci` there) with its profile and baseline
//! (`ts-eager`), 30 cases x 100 steps, with state comparison and responses
//! only (`--no-state`), three rounds of each (every round printed: figures
//! vary run to run on a shared machine). `--server` is any command that
//! prints `listening on URL` first, e.g. `"target/release/conform serve
//! --port 0"`, or, with `--url URL`, any server that listens there (the
//! Rust server: `--server "resonate dev --debug --server-port 8001
//! --storage-sqlite-path /tmp/r.db" --url http://127.0.0.1:8001 --profile
//! resonate --baseline resonate`). `--extra` adds flags to every `conform
//! run` (`--extra "--pipeline 1"`: one request at a time). After the rounds,
//! each mode's ratios: lowest, median, highest. `--conform` names the
//! harness binaries to measure (default: the one cargo built with the
//! bench); with several, every round runs each of them in turn against the
//! same server, every other round in the reverse order, so a before/after
//! comparison shares the machine's load and the server's warming.
//! Not run by the tests.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// One measured run: CPU seconds of each process and the steps run.
struct Figures {
    harness: f64,
    server: f64,
    steps: u64,
}

/// The options of the bench.
struct Options {
    server: String,
    profile: String,
    baseline: String,
    seed: String,
    cases: String,
    steps: String,
    rounds: usize,
    url: Option<String>,
    extra: String,
    conform: Vec<String>,
}

impl Options {
    fn parse() -> Options {
        let args: Vec<String> = std::env::args().collect();
        let arg = |name: &str, default: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1).cloned())
                .unwrap_or_else(|| default.to_string())
        };
        let ts = workspace().join("scripts/ts-server/server.mjs");
        Options {
            server: arg("--server", &format!("node {} --port 0", ts.display())),
            profile: arg("--profile", "ts-eager"),
            baseline: arg("--baseline", "ts-eager"),
            seed: arg("--seed", "1"),
            cases: arg("--cases", "30"),
            steps: arg("--steps", "100"),
            rounds: arg("--rounds", "3").parse().expect("--rounds N"),
            url: args
                .iter()
                .position(|a| a == "--url")
                .and_then(|i| args.get(i + 1).cloned()),
            extra: arg("--extra", ""),
            conform: arg("--conform", env!("CARGO_BIN_EXE_conform"))
                .split(',')
                .map(str::to_string)
                .collect(),
        }
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The server, started from `cmd` (split on spaces); its child and URL:
/// `url` once it accepts connections there, else the one it prints.
/// The server the bench started, stopped when dropped: also when the
/// bench stops on a panic (a harness it cannot start, a red run), so no
/// server outlives it.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(cmd: &str, url: Option<&str>) -> (Server, String) {
    let mut words = cmd.split_whitespace();
    let program = words.next().expect("--server names a command");
    let child = Command::new(program)
        .args(words)
        .stdout(if url.is_some() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{cmd}`: {e}"));
    let mut child = Server(child);
    if let Some(url) = url {
        let addr = url.trim_start_matches("http://").trim_end_matches('/');
        for _ in 0..200 {
            if std::net::TcpStream::connect(addr).is_ok() {
                return (child, url.to_string());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("`{cmd}` does not accept connections at {url}");
    }
    let mut line = String::new();
    BufReader::new(child.0.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints its address");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("`{cmd}` printed {line:?}, not `listening on URL`"))
        .to_string();
    (child, url)
}

/// User + system CPU seconds of a live process, all its threads.
fn proc_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5); `rest` starts at 3.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

/// Run `conform run` to its end and reap it with `wait4`: its exit status
/// and the CPU seconds (user + system, every thread) it used.
fn run_harness(cmd: &mut Command) -> (i32, f64) {
    // Reaped by `wait4` below, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child, not yet reaped; both pointers are
    // valid for the call.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as i32, "wait4");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, secs(usage.ru_utime) + secs(usage.ru_stime))
}

/// One run of `conform run` against the server at `url`.
fn measure(
    o: &Options,
    conform: &str,
    url: &str,
    server_pid: u32,
    state: bool,
    dir: &Path,
) -> Figures {
    let report = dir.join("report.json");
    let mut cmd = Command::new(conform);
    cmd.args(["run", "--target", url, "--no-progress", "--no-shrink"])
        .args(["--profile", &o.profile, "--baseline", &o.baseline])
        .args(["--seed", &o.seed, "--cases", &o.cases, "--steps", &o.steps])
        .arg("--out-dir")
        .arg(dir.join("failures"))
        .arg("--report")
        .arg(&report)
        .args(o.extra.split_whitespace())
        .stdout(Stdio::null());
    if !state {
        cmd.arg("--no-state");
    }
    let before = proc_cpu(server_pid);
    let (code, harness) = run_harness(&mut cmd);
    let server = proc_cpu(server_pid) - before;
    assert_eq!(code, 0, "the bench needs a green run (exit {code})");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report")).unwrap();
    let steps = report["steps"].as_u64().expect("steps in the report");
    Figures {
        harness,
        server,
        steps,
    }
}

fn main() {
    let o = Options::parse();
    let dir = std::env::temp_dir().join(format!("conform-cpu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let (server, url) = start_server(&o.server, o.url.as_deref());
    println!(
        "{} cases x {} steps, seed {}, profile {}, baseline {}, against `{}` ({url}){}",
        o.cases,
        o.steps,
        o.seed,
        o.profile,
        o.baseline,
        o.server,
        if o.extra.is_empty() {
            String::new()
        } else {
            format!(", with `{}`", o.extra)
        }
    );
    println!("CPU per step (user + system, every thread), µs:");
    for (i, c) in o.conform.iter().enumerate() {
        println!("harness {i}: {c}");
    }
    println!(
        "{:<16} {:>7} {:>9} {:>9} {:>7}",
        "mode", "harness", "harness", "server", "ratio"
    );
    // A first run warms the server (a JIT such as Node's) and the page cache.
    let _ = measure(&o, &o.conform[0], &url, server.0.id(), true, &dir);
    let mut summary = Vec::new();
    for (name, state) in [("with state", true), ("responses only", false)] {
        let mut ratios = vec![Vec::new(); o.conform.len()];
        for round in 0..o.rounds {
            // Every other round in reverse: the server's CPU per step keeps
            // falling for a while after the first run (measured against
            // Node.js: 53 µs a step in the first responses-only run of a
            // bench, 33 in its eighth), so a fixed order would charge the
            // drift to the later binaries.
            let mut order: Vec<usize> = (0..o.conform.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let conform = &o.conform[i];
                let f = measure(&o, conform, &url, server.0.id(), state, &dir);
                let per = |s: f64| s * 1e6 / f.steps as f64;
                println!(
                    "{name:<16} {i:>7} {:>9.0} {:>9.0} {:>7.2}",
                    per(f.harness),
                    per(f.server),
                    f.harness / f.server
                );
                ratios[i].push(f.harness / f.server);
            }
        }
        for (i, mut r) in ratios.into_iter().enumerate() {
            r.sort_by(f64::total_cmp);
            summary.push((name, i, r));
        }
    }
    println!("ratio (harness / server): lowest, median, highest");
    for (name, i, r) in summary {
        if let (Some(lo), Some(hi)) = (r.first(), r.last()) {
            println!("{name:<16} {i:>7} {lo:.2} {:.2} {hi:.2}", r[r.len() / 2]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
