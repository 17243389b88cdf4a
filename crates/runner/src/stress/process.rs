//! The target as a process the harness owns (`--server-cmd`): started,
//! killed with SIGKILL at a moment the run chooses, and started again on
//! the same address. The command runs under `sh -c "exec …"`, so the kill
//! reaches the server itself, not a shell in front of it.

use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a (re)started server may take to accept connections: a
/// database-backed one (resonate-pg's shim makes and loads its cluster on
/// first start) takes seconds on an idle machine and over 30 on a loaded
/// one, and slowness at start is not a fault of the run.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// A server process and the address it listens on.
pub struct ServerProcess {
    cmd: String,
    addr: SocketAddr,
    child: Option<Child>,
    /// Restarts so far.
    pub restarts: usize,
}

impl ServerProcess {
    /// Start `cmd` and wait until `url`'s host and port accept a connection.
    pub fn start(cmd: &str, url: &str) -> Result<ServerProcess, String> {
        let u = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        let addr = u
            .socket_addrs(|| Some(80))
            .map_err(|e| format!("{url}: {e}"))?
            .into_iter()
            .next()
            .ok_or_else(|| format!("{url}: no address"))?;
        let mut p = ServerProcess {
            cmd: cmd.to_string(),
            addr,
            child: None,
            restarts: 0,
        };
        p.spawn()?;
        Ok(p)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {}", self.cmd))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("could not start `{}`: {e}", self.cmd))?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(format!(
                        "`{}` exited ({status}) before it listened",
                        self.cmd
                    ));
                }
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "`{}` did not listen on {} within {}s",
                    self.cmd,
                    self.addr,
                    READY_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill it with SIGKILL and wait for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again (after [`ServerProcess::kill`]).
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        // The old socket may linger a moment; the new process binds anew.
        self.restarts += 1;
        self.spawn()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
