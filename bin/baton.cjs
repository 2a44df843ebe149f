#!/bin/sh
':' /*
# This file is a shell script and Node's JavaScript at once: the line above does nothing in the
# shell and opens a comment in JavaScript. Run from PATH (`baton ...`, as agents run their hooks),
# the shell reads it first. A hook (`baton hook <agent> <Event>`) it answers without starting
# Node when the workspace's server can (src/server/hook-client-route.ts: ~9-15 ms against ~24 for
# Node's start alone); everything else, and every hook the server does not answer, it hands to Node,
# which runs this same file as JavaScript below (docs/integrations.md, "The hook server").
# A first argument `--node=<absolute path>` names that Node (hooks an install wrote by absolute
# path, which do not look up PATH); otherwise it is `node` from PATH.
baton_node=node
case ${1-} in --node=/*)
  baton_node=${1#--node=}
  shift
  ;;
esac
if [ $# -eq 0 ] && [ ! -t 0 ] && ! [ /dev/stdin -ef /dev/null ]; then
  # Nothing to run, and input waiting: a hook's command without its arguments (Claude Code before
  # 2.1.139 runs an exec-form hook's "command" alone). A failure the agent shows, not help and 0.
  echo 'baton: no command given (`baton --help` lists them). A hook that runs baton with no arguments has lost them: Claude Code before 2.1.139 runs an exec-form hook'"'"'s "command" without its "args". Upgrade it, or run `baton hooks install claude` again with it on PATH.' >&2
  exit 1
fi
case $#:${1-}:${3-} in
3:hook:-* | 3:hook:) exec "$baton_node" "$0" "$@" ;;
3:hook:*) ;;
*) exec "$baton_node" "$0" "$@" ;;
esac
case ${BASH_VERSION-} in [1-3].* | 4.[0-3].*) exec "$baton_node" "$0" "$@" ;; esac # macOS's bash 3.2 as sh
if [ -z "${BASH_VERSION-}" ]; then
  # The client needs bash (its /dev/tcp); sh is often another shell. No BASH_ENV: a startup file
  # would cost every hook, and anything it printed would land before the answer.
  if [ -x /bin/bash ] && [ -r /proc/self/stat ]; then
    case $baton_node in /*) BASH_ENV='' exec /bin/bash "$0" "--node=$baton_node" "$@" ;; esac
    BASH_ENV='' exec /bin/bash "$0" "$@"
  fi
  exec "$baton_node" "$0" "$@"
fi
# From here on only bash reads this part, and it stops at `exec` or `exit`. Not in POSIX mode
# (bash as sh, POSIXLY_CORRECT): there a failed connection would end the shell.
set +e +u +o posix # nor with errexit or nounset from an exported SHELLOPTS
baton_hook_client() {
  local LC_ALL=C # lengths in bytes
  ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) || return 1
  [[ /proc/self -ef /proc/$$ ]] || return 1 # a /proc of this pid namespace
  [[ $2 =~ ^[a-z]+$ && $3 =~ ^[A-Za-z.]+$ ]] || return 1
  # Hooks set off in the environment never connect (the workspace's config is the server's to read).
  local mode=${BATON_HOOK_SERVER-}
  mode=${mode,,}
  mode=${mode//[[:space:]]/}
  case $mode in off | 0 | false | no) return 1 ;; esac
  # The workspace's server, as .baton/server.json names it (nearest .baton/ up from here; the
  # server judges the hook's own workspace from its payload and refuses another's).
  local dir=${BATON_ROOT:-$PWD} up info
  [[ $dir == /* ]] || dir=$PWD/$dir
  while [[ ! -d $dir/.baton ]]; do
    up=${dir%/*}
    [[ $up == "$dir" || $dir == / ]] && return 1
    dir=${up:-/}
  done
  local file=$dir/.baton/server.json
  [[ -f $file && ! -L $file && -O $file ]] || return 1 # the user's own file, as the server writes it
  IFS= read -r -d '' info 2>/dev/null <"$file"
  [[ $info =~ \"pid\":([0-9]+) ]] || return 1
  local pid=${BASH_REMATCH[1]}
  [[ $info =~ \"port\":([0-9]+) ]] || return 1
  local port=${BASH_REMATCH[1]}
  [[ $info =~ \"token\":\"([A-Za-z0-9_-]+)\" ]] || return 1
  local token=${BASH_REMATCH[1]}
  [[ $info =~ \"startTime\":\"([0-9]+)\" ]] || return 1
  local start=${BASH_REMATCH[1]}
  # Proven as a hook process proves it (platform/server-file.ts), and as a server is proven
  # before it is signalled (`servesWorkspace`): the process the file names is the user's own, the
  # one that wrote it (its start time), and runs `serve` for this workspace (its last --root, else
  # BATON_ROOT in its environment, else its working directory in the workspace). A file a
  # repository shipped could name pid 1, or another user's process.
  [[ -O /proc/$pid ]] || return 1
  local stat rest arg root= next= serves=
  IFS= read -r stat 2>/dev/null <"/proc/$pid/stat" || return 1
  rest=${stat##*) }
  local - # `set -f` for this function only
  set -f
  local -a f=($rest)
  [[ ${f[19]-} == "$start" ]] || return 1
  while IFS= read -r -d '' arg; do
    if [[ -n $next ]]; then
      root=$arg next=
    elif [[ $arg == --root ]]; then
      next=1
    elif [[ $arg == --root=* ]]; then
      root=${arg#--root=}
    elif [[ $arg == serve ]]; then
      serves=1
    fi
  done 2>/dev/null <"/proc/$pid/cmdline"
  [[ -n $serves ]] || return 1
  if [[ -z $root ]]; then # else BATON_ROOT in the environment it started with
    while IFS= read -r -d '' arg; do
      if [[ $arg == BATON_ROOT=* ]]; then # the first, as getenv reads it
        root=${arg#BATON_ROOT=}
        break
      fi
    done 2>/dev/null <"/proc/$pid/environ"
  fi
  if [[ -n $root ]]; then
    [[ $root == /* ]] || root=/proc/$pid/cwd/$root
    [[ $root -ef $dir ]] || return 1
  else # else its working directory, in this workspace or a folder of it
    up=/proc/$pid/cwd
    until [[ $up -ef $dir ]]; do
      [[ -d $up && ! $up -ef / && ${#up} -lt 4096 ]] || return 1
      up+=/..
    done
  fi
  # The payload (a pipe or a file is read through /dev/stdin in large reads; a socket, which
  # Node-based agents may hand their hooks, cannot be opened there: cat reads it). Up to 64 KiB
  # goes to the server: the loopback buffers hold that much, so writing it never waits on a
  # server that stopped; a larger one is Node's, which writes without blocking.
  { payload=$(</dev/stdin); } 2>/dev/null || {
    hash cat 2>/dev/null || return 1
    payload=$(cat 2>/dev/null)
  }
  ((${#payload} <= 64 * 1024)) || return 2
  # The request, with this process's pid (the server reads its environment, working directory and
  # parent from /proc, as a hook process would know them) and the request id Node gets too.
  { exec {fd}<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 2
  printf 'POST /v1/hook-clients/%s/%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\nX-Baton-Hook-Pid: %s\r\nX-Baton-Hook-Started: %s\r\nX-Baton-Request-Id: %s\r\nConnection: close\r\n\r\n%s' \
    "$2" "$3" "$port" "$token" "${#payload}" "$$" "$started" "$request" "$payload" >&"$fd" || return 2
  # Taken within a second, or not at all (a server stopped or busy); then answered by the time
  # it says (the hook's deadline and a grace), never less than a second.
  local line status ms=5000 wait len= chunked= body= size chunk ended=
  IFS=$' \r' read -r -t 1 _ status _ <&"$fd"
  case $? in
  0) ;;
  1) return 2 ;; # closed without a word
  *)
    # Silent for a second (hung, or busy): Node does not ask it again (another second).
    silent=--server-silent reason="no answer within a second"
    return 2
    ;;
  esac
  if [[ $status != 200 ]]; then
    # A refusal (answer_in_process, a server shutting down): what it says, with BATON_HOOK_DEBUG.
    [[ -n ${BATON_HOOK_DEBUG-} ]] && IFS= read -r -d '' -t 1 body <&"$fd"
    reason=${body##*\"message\":\"}
    reason=${reason%%\"*}
    return 2
  fi
  while IFS=$'\r' read -r -t 1 line <&"$fd"; do
    if [[ -z $line ]]; then
      ended=1
      break
    fi
    line=${line,,}
    [[ $line =~ ^x-baton-wait-ms:\ *([0-9]+)$ ]] && ms=${BASH_REMATCH[1]}
    [[ $line =~ ^content-length:\ *([0-9]+)$ ]] && len=${BASH_REMATCH[1]}
    [[ $line =~ ^transfer-encoding:\ *chunked$ ]] && chunked=1
  done
  [[ -n $ended ]] || return 2 # the headers broke off
  ((ms >= 1000)) || ms=1000
  printf -v wait '%d.%03d' $((ms / 1000)) $((ms % 1000))
  ended=
  if [[ -n $chunked ]]; then
    while IFS=$'\r' read -r -t "$wait" size <&"$fd"; do
      size=${size%%;*}
      [[ $size =~ ^[0-9a-f]{1,7}$ ]] || return 2
      if ((16#$size == 0)); then
        ended=1
        break
      fi
      IFS= read -r -N $((16#$size)) -t "$wait" chunk <&"$fd" && ((${#chunk} == 16#$size)) || return 2
      body+=$chunk
      IFS= read -r -t "$wait" line <&"$fd" || return 2
    done
  elif [[ -n $len ]]; then
    IFS= read -r -N "$len" -t "$wait" body <&"$fd" && ((${#body} == len)) && ended=1
  fi
  [[ -n $ended ]] || return 2 # the answer broke off, or came late: Node answers the hook
  exec {fd}>&-
  printf '%s' "$body" || true
  [[ -n ${BATON_HOOK_DEBUG-} ]] && printf 'baton hook: answered by the server (pid %s), no Node started\n' "$pid" >&2
  return 0
}
trap '' PIPE
payload= reason= started= request= fd= silent=
if [[ -n ${EPOCHREALTIME-} ]]; then
  started=${EPOCHREALTIME/[.,]/}
  started=${started:0:13}
else
  printf -v started '%(%s)T000' -1 # bash 4.4: to the second
fi
request=$$-${EPOCHREALTIME/[.,]/}-${SRANDOM:-$RANDOM$RANDOM}
baton_hook_client "$@"
case $? in
0) exit 0 ;;
1)
  trap - PIPE
  exec "$baton_node" "$0" "$@" # stdin untouched
  exit 127
  ;;
esac
[[ -n ${BATON_HOOK_DEBUG-} ]] && printf 'baton hook: not answered by the server%s: handed to Node\n' "${reason:+ ($reason)}" >&2
[[ -n ${fd-} ]] && exec {fd}>&- # the connection is not Node's
trap - PIPE
exec "$baton_node" "$0" "$@" "--started-at=$started" "--request-id=$request" $silent <<<"$payload"
# A here-string needs a temporary file past the pipe's size: where none can be made, a pipe.
printf '%s\n' "$payload" | "$baton_node" "$0" "$@" "--started-at=$started" "--request-id=$request" $silent
exit
*/
"use strict";
// Starts dist/cli.cjs through a V8 code cache. Agent hooks start `baton` on every tool call,
// and compiling the bundle was the largest single start-up cost (see docs/benchmarks.md).
// The cache sits beside the bundle, or in the user's cache directory when the install is not
// writable (a global install by root); a new bundle or Node gets a new one. It is only a cache:
// if it cannot be read or written, baton runs without it.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

/**
 * Where the cache of `file` is (`<place><bundle>.[<kind>.]<node version>.`, then `<size>-<ctime>.v8cache`):
 * beside the bundle, or in the user's cache directory (`$XDG_CACHE_HOME/baton/v8/`, named after
 * the bundle's path) when the install is not writable. A cache holds what the process that wrote
 * it ran, and dist/cli.cjs runs quite different code for `status`, `resume` and a hook answered
 * in its own process: each has a cache of its own, so none compiles its own functions again.
 */
function cacheStems(file) {
  const kind = path.basename(file) === "cli.cjs" ? cliKind : "";
  const name = `${kind}${process.version}.`;
  return [
    `${file}.${name}`,
    () => {
      const base = process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache");
      return path.join(base, "baton", "v8", `${encodeURIComponent(file)}.${name}`);
    },
  ];
}

function readCache(files) {
  for (const f of files) {
    try {
      return fs.readFileSync(f);
    } catch {
      // not there (yet)
    }
  }
  return undefined;
}

function writeCache(files, data) {
  for (const f of files) {
    try {
      fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
      const tmp = `${f}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, data, { mode: 0o644 });
      fs.renameSync(tmp, f);
      dropStale(f);
      return;
    } catch {
      // read-only: try the next place
    }
  }
}

/** Caches of the same bundle, kind and Node made from an earlier bundle (an upgrade): never read again. */
function dropStale(f) {
  const dir = path.dirname(f);
  const name = path.basename(f);
  const stem = name.slice(0, name.lastIndexOf(".", name.length - ".v8cache".length - 1) + 1);
  for (const other of fs.readdirSync(dir)) {
    if (other !== name && other.startsWith(stem) && other.endsWith(".v8cache")) fs.rmSync(path.join(dir, other), { force: true });
  }
}

function load(file) {
  // V8 checks a cache against the source's length only (and Node's version and flags): a new
  // bundle of the same length (an upgrade, under a cache in the user's directory, which outlives
  // it) would run the old one's compiled code. The bundle's size and inode change time name the
  // file a cache was made from (npm gives every file it installs the same modification time).
  const st = fs.statSync(file);
  const id = `${st.size}-${Math.trunc(st.ctimeMs)}.v8cache`;
  const [beside, user] = cacheStems(file);
  const places = () => [beside + id, user() + id];
  let cached;
  try {
    cached = fs.readFileSync(beside + id);
  } catch {
    cached = readCache(places().slice(1));
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData: cached });
  if (cached === undefined || script.cachedDataRejected) {
    // After the run, so the functions that ran are compiled into the cache too; only after a
    // run that succeeded (help, or a failure, runs little of what the command runs).
    process.once("exit", (code) => {
      if (code === 0) writeCache(places(), script.createCachedData());
    });
  }
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  return mod.exports;
}

// dist/cli.cjs loads dist/cli-full.cjs (the whole command table) through the same cache, and
// dist/pg.cjs when a PostgreSQL store is configured; dist/hook.cjs loads dist/cli.cjs when a
// hook is answered in its own process.
globalThis[Symbol.for("baton.load")] = load;
/**
 * Whether a `.baton/server.json` is in or above a folder where `baton status|resume --json`
 * looks for its workspace (src/cli/ask.ts): the working directory, a `--root` given, BATON_ROOT.
 * More places than ask.ts reads, never fewer: only a hint. With none, no server can answer and
 * dist/ask.cjs is not loaded (a bundle fewer to read and run); with one, ask.cjs decides.
 */
function serverNamed(args) {
  try {
    const starts = [process.cwd()];
    if (process.env.BATON_ROOT) starts.push(process.env.BATON_ROOT);
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--root" && i + 1 < args.length) starts.push(args[i + 1]);
      else if (args[i].startsWith("--root=")) starts.push(args[i].slice("--root=".length));
    }
    for (const start of starts) {
      for (let dir = path.resolve(start), up; ; dir = up) {
        if (fs.existsSync(path.join(dir, ".baton", "server.json"))) return true;
        up = path.dirname(dir);
        if (up === dir) break;
      }
    }
    return false;
  } catch {
    return true; // no working directory, say: let ask.cjs judge
  }
}

// `baton hook <agent> <Event>` (agent hooks, on every tool call) starts with dist/hook.cjs, a
// small bundle that hands the hook to the workspace's running server (src/hooks/entry.ts);
// `baton status --json` and `baton resume --json` (agents, every turn) with dist/ask.cjs,
// which asks that server for the report (src/cli/ask.ts); `--help` goes to the full CLI.
const argv = process.argv;
// The shell part above takes a first `--node=<path>` (the Node it hands to); Node run on this
// file directly with one drops it, so the command reads the same either way.
if (/^--node=\//.test(argv[2] || "")) argv.splice(2, 1);
const help = argv.includes("--help") || argv.includes("-h");
const hook = argv[2] === "hook" && argv.length >= 4 && !help;
// The kind of dist/cli.cjs's cache this process reads and writes (cacheStems).
const cliKind = hook ? "hook." : (argv[2] === "status" || argv[2] === "resume") && !help ? `${argv[2]}.` : "";
let ask = (argv[2] === "status" || argv[2] === "resume") && argv.includes("--json") && !help;
if (ask && !serverNamed(argv.slice(3))) {
  ask = false;
  if (process.env.BATON_DEBUG) {
    try {
      fs.writeSync(2, `baton: ${argv[2]} ran in its own process: no .baton/server.json where it looks for a workspace\n`);
    } catch {
      // nowhere to say it
    }
  }
}
load(path.join(__dirname, "..", "dist", hook ? "hook.cjs" : ask ? "ask.cjs" : "cli.cjs"));
