"""A private PostgreSQL server (Debian's postgresql 15) for the gallery tests and benchmarks: started
on its own Unix socket directory (no TCP) as a non-root user (`nobody` when run as root), with
password (SCRAM) logins read from a password file; stopped and removed at the end.
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile

USER, PASSWORD = "taconite", "s3cret-for-tests"
PG_BIN = (sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1:] or [""])[0]


def pg(tool):
    return os.path.join(PG_BIN, tool)


def installed():
    return os.path.exists(pg("initdb")) and os.path.exists(pg("pg_ctl"))


def server_user_args(args):
    """initdb and postgres refuse to run as root: run them as `nobody` when we are root."""
    return ["runuser", "-u", "nobody", "--", *args] if os.geteuid() == 0 else list(args)


def as_server_user(args):
    return subprocess.run(server_user_args(args), capture_output=True, text=True, timeout=300)


class Server:
    def __init__(self, settings=""):
        """settings: more `-c name=value` options for the server."""
        self.settings = settings
        self.work = self.data = self.sockets = self.passfile = None
        self.env = {}

    def start_args(self):
        return [pg("pg_ctl"), "-D", self.data, "-w", "-t", "120", "-l", os.path.join(self.work, "server.log"),
                "-o", f"-k {self.sockets} -c listen_addresses='' -c fsync=off {self.settings}", "start"]

    def stop_args(self):
        return [pg("pg_ctl"), "-D", self.data, "-w", "-m", "fast", "stop"]

    def start(self):
        self.work = tempfile.mkdtemp(prefix="taconite-pg-")
        self.data, self.sockets = os.path.join(self.work, "data"), os.path.join(self.work, "sockets")
        os.makedirs(self.sockets)
        pwfile = os.path.join(self.work, "initdb-password")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            for p in (self.work, self.sockets, pwfile):
                os.chown(p, nobody.pw_uid, nobody.pw_gid)
        r = as_server_user([pg("initdb"), "-D", self.data, "-U", USER, "--pwfile", pwfile,
                            "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"])
        if r.returncode != 0:
            raise RuntimeError("initdb failed: " + r.stdout + r.stderr)
        r = as_server_user(self.start_args())
        if r.returncode != 0:
            log = os.path.join(self.work, "server.log")
            raise RuntimeError("pg_ctl start failed: " + r.stdout + r.stderr +
                               (open(log).read() if os.path.exists(log) else ""))
        self.passfile = os.path.join(self.work, "pgpass")
        with open(self.passfile, "w") as f:
            f.write(f"*:*:*:{USER}:{PASSWORD}\n")
        os.chmod(self.passfile, 0o600)
        self.env = dict(os.environ, PGPASSFILE=self.passfile, PGHOST=self.sockets, PGUSER=USER)

    def ensure_running(self):
        """After a test that stops the server: started again if it was left down."""
        if as_server_user([pg("pg_ctl"), "-D", self.data, "status"]).returncode != 0:
            r = as_server_user(self.start_args())
            assert r.returncode == 0, r.stdout + r.stderr

    def stop(self):
        if self.data:
            as_server_user(self.stop_args())
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)

    def location(self, name):
        return f"postgresql:///{name}?host={self.sockets}&user={USER}"

    def createdb(self, name):
        r = subprocess.run([pg("createdb"), name], capture_output=True, text=True, timeout=120, env=self.env)
        assert r.returncode == 0, r.stderr
        return self.location(name)

    def psql(self, database, sql):
        r = subprocess.run([pg("psql"), "-v", "ON_ERROR_STOP=1", "-qAt", "-d", database, "-c", sql],
                           capture_output=True, text=True, timeout=120, env=self.env)
        assert r.returncode == 0, r.stderr
        return r.stdout
