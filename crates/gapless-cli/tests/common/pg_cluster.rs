//! A private PostgreSQL cluster for a test that stops, restarts or
//! reconfigures its server: `initdb` into a temp dir, `pg_ctl start` on a
//! free loopback port, trust authentication, the socket in the temp dir.
//! The shared server on 5432, which other tests use at the same time, is
//! never touched. Stopped (`-m immediate`) and removed on drop.
//!
//! `initdb` refuses to run as root: as root, every PostgreSQL program runs
//! as the `postgres` OS user (`runuser`), and the temp dir is given to it.
//! Missing PostgreSQL binaries or a failing `initdb` fail the test, with
//! what was tried: these tests are never skipped silently.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A private cluster.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bindir: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// More `-c name=value` settings for each start.
    settings: Vec<String>,
}

/// The directory of `initdb` and `pg_ctl`: `pg_config --bindir`, else the
/// newest `/usr/lib/postgresql/*/bin`.
fn bindir() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").exists())
        .collect();
    found.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().unwrap_or_else(|| {
        panic!(
            "no PostgreSQL server binaries (initdb, pg_ctl): neither `pg_config --bindir` \
             nor /usr/lib/postgresql/*/bin has them; install the postgresql package"
        )
    })
}

/// Whether this process runs as root (then `initdb` must not).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Give `path` to the `postgres` OS user (when running as root).
pub fn give_to_postgres(path: &Path) {
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(path)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown postgres {}", path.display());
    }
}

impl PgCluster {
    /// A new cluster, started.
    pub fn start() -> PgCluster {
        PgCluster::start_with(|_| {})
    }

    /// A new cluster, with `configure` called on its data directory (to
    /// write `postgresql.conf` additions, `pg_hba.conf`, certificates)
    /// after `initdb` and before the first start.
    pub fn start_with(configure: impl FnOnce(&Path)) -> PgCluster {
        let dir = tempfile::Builder::new()
            .prefix("gapless-pg-")
            .tempdir()
            .expect("temp dir");
        give_to_postgres(dir.path());
        let mut cluster = PgCluster {
            dir,
            bindir: bindir(),
            port: 0,
            settings: Vec::new(),
        };
        let data = cluster.data();
        let out = cluster.pg(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "--no-sync".as_ref(),
                "--no-instructions".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
            ],
        );
        assert!(
            out.status.success(),
            "initdb into {} failed: {}",
            data.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        configure(&data);
        give_to_postgres(cluster.dir.path());
        // A port taken between the probe and the start is tried again.
        for _ in 0..5 {
            cluster.port = free_port();
            if cluster.try_start().is_ok() {
                return cluster;
            }
        }
        let err = cluster.try_start().unwrap_err();
        panic!("cannot start a private PostgreSQL cluster: {err}");
    }

    /// The data directory.
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The socket directory (and the log's).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `postgres://postgres@127.0.0.1:PORT/DB` plus `params` (`a=b&c=d`).
    pub fn url(&self, db: &str, params: &str) -> String {
        let mut url = format!("postgres://postgres@127.0.0.1:{}/{db}", self.port);
        if !params.is_empty() {
            url.push('?');
            url.push_str(params);
        }
        url
    }

    /// Run the PostgreSQL program `name` with `args` (as `postgres` when
    /// root).
    fn pg(&self, name: &str, args: &[&std::ffi::OsStr]) -> Output {
        let program = self.bindir.join(name);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
    }

    fn try_start(&self) -> Result<(), String> {
        let data = self.data();
        let log = self.dir.path().join("server.log");
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=60",
            self.port,
            self.dir.path().display()
        );
        for setting in &self.settings {
            options.push_str(" -c ");
            options.push_str(setting);
        }
        let out = self.pg(
            "pg_ctl",
            &[
                "start".as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "30".as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
            ],
        );
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start on port {}: {} {}; log: {}",
                self.port,
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim(),
                std::fs::read_to_string(&log).unwrap_or_default()
            ))
        }
    }

    /// Start the cluster again on the same port.
    pub fn restart(&self) {
        self.try_start()
            .unwrap_or_else(|e| panic!("cannot start the cluster again: {e}"));
    }

    /// Stop it at once (`pg_ctl stop -m immediate`: the server's processes
    /// are killed, as in a crash), and wait until it is down.
    pub fn stop_immediate(&self) {
        self.stop("immediate");
    }

    /// Stop it with `pg_ctl stop -m MODE` (`smart`, `fast`: sessions are
    /// ended with an error; `immediate`), and wait until it is down.
    pub fn stop(&self, mode: &str) {
        let data = self.data();
        let out = self.pg(
            "pg_ctl",
            &[
                "stop".as_ref(),
                "-w".as_ref(),
                "-m".as_ref(),
                mode.as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl stop -m {mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Run `sql` as `postgres` in database `db` (plain, over the socket
    /// directory, which pg_hba.conf's `local` line trusts).
    pub fn psql(&self, db: &str, sql: &str) {
        let out = self.run_psql(db, sql, &["-q", "-v", "ON_ERROR_STOP=1"]);
        assert!(
            out.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Run `sql` as `postgres` in `db` and answer its one value as text.
    pub fn psql_value(&self, db: &str, sql: &str) -> String {
        let out = self.run_psql(db, sql, &["-A", "-t"]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `psql` with `flags`, as `postgres` over the socket directory.
    fn run_psql(&self, db: &str, sql: &str, flags: &[&str]) -> Output {
        let host = self.dir.path().display().to_string();
        let port = self.port.to_string();
        let mut args: Vec<&std::ffi::OsStr> = vec!["-X".as_ref()];
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        for a in [
            "-h",
            host.as_str(),
            "-p",
            port.as_str(),
            "-U",
            "postgres",
            "-d",
            db,
            "-c",
            sql,
        ] {
            args.push(std::ffi::OsStr::new(a));
        }
        self.pg("psql", &args)
    }
}

/// The certificates of a cluster that takes only TLS connections.
pub struct TlsFiles {
    /// The PEM certificate of the authority that signed the server's.
    pub ca: PathBuf,
    /// Another authority's, which did not.
    pub wrong_ca: PathBuf,
}

/// Run `openssl` with `args` in `dir`, failing the test on an error.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (the openssl package): {e}"));
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed authority `name` in `dir` (`NAME.crt`, `NAME.key`).
fn authority(dir: &Path, name: &str) {
    let (crt, key, subject) = (
        format!("{name}.crt"),
        format!("{name}.key"),
        format!("/CN={name}"),
    );
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &subject,
            "-keyout",
            &key,
            "-out",
            &crt,
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
}

impl PgCluster {
    /// A new cluster with `ssl=on`, a certificate for `localhost` (only: not
    /// for `127.0.0.1`) signed by an authority made here, and a pg_hba.conf
    /// that takes TCP connections only over TLS (`hostssl`); the socket
    /// stays open for [`PgCluster::psql`].
    pub fn start_tls_only() -> (PgCluster, TlsFiles) {
        let mut files = None;
        let cluster = PgCluster::start_with(|data| {
            let certs = data.parent().unwrap().join("certs");
            std::fs::create_dir(&certs).unwrap();
            authority(&certs, "test-ca");
            authority(&certs, "wrong-ca");
            openssl(
                &certs,
                &[
                    "req",
                    "-new",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-subj",
                    "/CN=localhost",
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                ],
            );
            std::fs::write(
                certs.join("server.ext"),
                "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
                 keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
            )
            .unwrap();
            openssl(
                &certs,
                &[
                    "x509",
                    "-req",
                    "-in",
                    "server.csr",
                    "-CA",
                    "test-ca.crt",
                    "-CAkey",
                    "test-ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-extfile",
                    "server.ext",
                    "-out",
                    "server.crt",
                ],
            );
            for f in ["server.crt", "server.key"] {
                std::fs::copy(certs.join(f), data.join(f)).unwrap();
            }
            // The server refuses a key that others may read.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                data.join("server.key"),
                std::fs::Permissions::from_mode(0o600),
            )
            .unwrap();
            let mut conf = std::fs::OpenOptions::new()
                .append(true)
                .open(data.join("postgresql.conf"))
                .unwrap();
            std::io::Write::write_all(
                &mut conf,
                b"\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
            )
            .unwrap();
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\n\
                 hostssl all all ::1/128 trust\n",
            )
            .unwrap();
            files = Some(TlsFiles {
                ca: certs.join("test-ca.crt"),
                wrong_ca: certs.join("wrong-ca.crt"),
            });
        });
        (cluster, files.expect("configured"))
    }
}

/// Streaming replication: a primary whose commits wait for a standby, a
/// standby made from it with `pg_basebackup -R`, promotion, and a crash of
/// every process of a cluster at once.
impl PgCluster {
    /// A primary whose every commit waits until a standby has written it
    /// (`synchronous_standby_names = '*'`): until a standby connects, its
    /// commits wait.
    pub fn start_primary() -> PgCluster {
        PgCluster::start_with(|data| {
            append(
                &data.join("postgresql.conf"),
                "wal_level = replica\nmax_wal_senders = 4\n\
                 synchronous_standby_names = '*'\nsynchronous_commit = on\n",
            );
        })
    }

    /// A streaming standby of `primary`, started and confirmed by the
    /// primary as its synchronous standby. Its own
    /// `synchronous_standby_names` is empty: once promoted it has no
    /// standby to wait for.
    pub fn standby_of(primary: &PgCluster) -> PgCluster {
        let dir = tempfile::Builder::new()
            .prefix("gapless-pg-standby-")
            .tempdir()
            .expect("temp dir");
        give_to_postgres(dir.path());
        let mut cluster = PgCluster {
            dir,
            bindir: primary.bindir.clone(),
            port: 0,
            settings: Vec::new(),
        };
        let data = cluster.data();
        let port = primary.port.to_string();
        let out = cluster.pg(
            "pg_basebackup",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-R".as_ref(),
                "-X".as_ref(),
                "stream".as_ref(),
                "-c".as_ref(),
                "fast".as_ref(),
                "--no-sync".as_ref(),
                "-h".as_ref(),
                "127.0.0.1".as_ref(),
                "-p".as_ref(),
                port.as_ref(),
                "-U".as_ref(),
                "postgres".as_ref(),
            ],
        );
        assert!(
            out.status.success(),
            "pg_basebackup from port {port}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        append(
            &data.join("postgresql.auto.conf"),
            "synchronous_standby_names = ''\n",
        );
        give_to_postgres(cluster.dir.path());
        let mut started = Err(String::new());
        for _ in 0..5 {
            cluster.port = free_port();
            started = cluster.try_start();
            if started.is_ok() {
                break;
            }
        }
        if let Err(e) = started {
            panic!("cannot start the standby: {e}");
        }
        let sync = wait_until(Duration::from_secs(30), || {
            primary.psql_value(
                "postgres",
                "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
            ) == "1"
        });
        assert!(
            sync,
            "the standby did not become the primary's synchronous standby"
        );
        cluster
    }

    /// Promote a standby (`pg_ctl promote -w`): it takes writes when this
    /// returns.
    pub fn promote(&self) {
        let data = self.data();
        let out = self.pg(
            "pg_ctl",
            &[
                "promote".as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl promote: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// SIGKILL the postmaster and every process it started, at once, as a
    /// machine that dies does; returns when none is left.
    pub fn crash(&self) {
        let pid_file = std::fs::read_to_string(self.data().join("postmaster.pid"))
            .expect("postmaster.pid of a running cluster");
        let postmaster: u32 = pid_file
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("a pid on postmaster.pid's first line");
        let mut pids = children_of(postmaster);
        pids.push(postmaster);
        // `kill` fails for a backend that ended on its own since it was
        // listed; what matters is that none is left.
        let _ = Command::new("kill")
            .arg("-9")
            .args(pids.iter().map(|p| p.to_string()))
            .status()
            .expect("run kill");
        let gone = wait_until(Duration::from_secs(10), || {
            pids.iter()
                .all(|p| !Path::new(&format!("/proc/{p}")).exists() || is_zombie(*p))
        });
        assert!(gone, "the cluster's processes outlived SIGKILL: {pids:?}");
    }
}

/// Append `text` to the file at `path`.
fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.write_all(text.as_bytes()).expect("append");
}

/// The processes whose parent is `pid` (from `/proc/*/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name is in parentheses and may hold spaces: the
        // fields after its closing parenthesis are the state, then the
        // parent's pid.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Whether `pid` is a zombie (dead, not yet reaped by its parent).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Poll `f` until it returns `Some`, at most `limit`; its value, or `None`
/// when the time ran out.
pub fn poll_until<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Poll `f` until it is true, at most `limit`; whether it became true.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    poll_until(limit, || f().then_some(())).is_some()
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data();
        if data.join("postmaster.pid").exists() {
            let _ = self.pg(
                "pg_ctl",
                &[
                    "stop".as_ref(),
                    "-w".as_ref(),
                    "-m".as_ref(),
                    "immediate".as_ref(),
                    "-D".as_ref(),
                    data.as_os_str(),
                ],
            );
        }
    }
}
