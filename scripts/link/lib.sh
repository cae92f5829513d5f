# scripts/link/lib.sh: shared driver code for link-lab-test (Link-Link baseline) and tutti-link-test
# (Tutti against real Link). Source it from a bash script after `set -uo pipefail`; it defines
# helpers only, and starts nothing until the script calls lab_acquire.
#
# Peers are controlled through a FIFO on stdin (JSON commands) and log JSON lines to $RUN/NAME.log:
#   aalink peers: scripts/link/aalink_peer.py (real Ableton Link, PyPI aalink)
#   Tutti peers:  tutti clock --serve (same command protocol; see README.md for the differences)
# Every peer runs inside a lab namespace (`scripts/lab exec HOST ...`), never in the root namespace.
#
# The including script sets LL_NAME (message prefix) before sourcing, and may set TUTTI (the tutti
# binary) to use start_tutti.

trap '' PIPE # a write to a dead peer's FIFO must fail, not kill the driver

LL_NAME=${LL_NAME:-$(basename "$0")}
LL_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$LL_HERE/../lib/harness.sh" # pass, fail, the checks (a no-op when the test sourced it already)
REPO="$(cd "$LL_HERE/../.." && pwd)"
LAB="$REPO/scripts/lab"
PEER="$LL_HERE/aalink_peer.py"
LOGQ="$LL_HERE/lablog.py" # wait (follows a peer's log) and now (CLOCK_MONOTONIC)
# The logs' analysis (phase agreement, beat continuity, a JSON file's fields), built beside tutti as
# tutti-link-pcap is (swift build [-c release] --product tutti-link-agreement).
AGREE=${TUTTI_LINK_AGREEMENT:-$(dirname "${TUTTI_BIN:-$REPO/.build/debug/tutti}")/tutti-link-agreement}
OUT=${LINK_LAB_OUT:-${TMPDIR:-/tmp}/tutti-link-lab} # not lab-out/: scripts/lab-test wipes that
WAIT_LAB_S=${LINK_LAB_WAIT_S:-1800}
TUTTI=${TUTTI:-}

FIG_KEYS=()
declare -A FIG
declare -A PFD PPID_ PLOG PKIND EN_T
ALLPIDS=()
NEXT_ID=0
LAB_OURS=0
LAB_ID=""
RUN=""
SCEN=""       # current scenario tag, recorded with checks and figures
CAPS=()       # packet captures running (PIDs), stopped on exit
NAP_PID=""

ll_need_root() { [[ $(id -u) -eq 0 ]] || { echo "$LL_NAME: needs root (network namespaces)" >&2; exit 2; }; }
ll_need_agreement() {
  [[ -x $AGREE ]] || { echo "$LL_NAME: no tutti-link-agreement at $AGREE (swift build --product tutti-link-agreement beside TUTTI_BIN, or set TUTTI_LINK_AGREEMENT)" >&2; exit 2; }
}
ll_need_aalink() {
  PY="$(command -v python3)" || { echo "$LL_NAME: no python3" >&2; exit 2; }
  "$PY" -c 'import aalink' 2>/dev/null || { echo "$LL_NAME: python3 has no aalink (pip install aalink==0.2.3)" >&2; exit 2; }
}

# ---- results -------------------------------------------------------------------------------------
# Checks and figures are printed and, once RUN exists, appended to $RUN/checks.tsv and figures.tsv
# (scenario TAB text) for the JSON summary.
record() { [[ -n $RUN && -d $RUN ]] && printf '%s\t%s\n' "$SCEN" "$2" >>"$RUN/$1"; return 0; }
record_check() { record checks.tsv "$1"; }
HARNESS_RECORD=record_check # pass and fail (scripts/lib/harness.sh) also go to checks.tsv
fig() { FIG_KEYS+=("$1"); FIG[$1]=$2; echo "  $1: $2"; record figures.tsv "$1	$2"; }
le() { [[ -n ${1:-} && ${1:-} != null ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
between() { [[ -n ${1:-} && ${1:-} != null ]] && awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(a >= lo && a <= hi) }'; }
absle() { [[ -n ${1:-} && ${1:-} != null ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !((a < 0 ? -a : a) <= b) }'; }
diff_ms() { if [[ -n ${1:-} && -n ${2:-} ]]; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (a - b) / 1e6 }'; fi; } # empty if either is
max_of() { printf '%s\n' "$@" | sort -g | tail -n 1; }
min_of() { printf '%s\n' "$@" | sort -g | head -n 1; }
stats_ms() { # "median M, max X" of the arguments
  (($#)) || { printf 'none'; return; }
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "median %.2f, max %.2f (n=%d)", v[int((NR + 1) / 2)], v[NR], NR; else printf "none" }'
}
jget() { "$AGREE" get "$1" "$2" 2>/dev/null; } # FILE KEY[.KEY...] : one value of a JSON file (empty if missing)
now_ns() { "$PY" "$LOGQ" now; }

nap() { sleep "$1" & NAP_PID=$!; wait "$NAP_PID" 2>/dev/null; NAP_PID=""; } # a sleep that signals interrupt

# ---- lab -----------------------------------------------------------------------------------------
lab_is_up() { # a lab exists, or the project's lab-test (which `up`s without asking) is running
  local st
  st=$("$LAB" status 2>/dev/null) # no `| head`: with pipefail an early-closing reader makes the pipe "fail"
  [[ $st == "lab: up"* ]] || pgrep -f 'scripts/lab-test' >/dev/null
}
# The namespace holder PIDs identify one `lab up`: if they change, somebody else re-created the lab
# under us (their `up` tore ours down, peers included): never `down` theirs, and void the run.
lab_id() { "$LAB" status 2>/dev/null | awk '$1 ~ /^h[0-9]+$/ { printf "%s ", $4 }'; }
lab_still_ours() { [[ -n $LAB_ID && "$(lab_id)" == "$LAB_ID" ]]; }
ensure_lab() {
  lab_still_ours && return 0
  fail "the lab stayed ours (someone else's \`scripts/lab up\` replaced it mid-run: figures void, run again)"
  harness_summary
  exit 1
}
lab_acquire() { # N : wait for any other lab (or scripts/lab-test) to go away, then `up N`; make RUN
  local n=$1 waited=0
  if lab_is_up; then
    echo "$LL_NAME: a lab is up (someone else's); waiting up to ${WAIT_LAB_S}s for it to go down" >&2
    while lab_is_up; do
      ((waited >= WAIT_LAB_S)) && { echo "$LL_NAME: lab still busy after ${WAIT_LAB_S}s, giving up" >&2; exit 2; }
      nap 5
      waited=$((waited + 5))
    done
  fi
  LAB_OURS=1
  LAB_ID=""
  "$LAB" up "$n" >/dev/null || { echo "$LL_NAME: scripts/lab up $n failed" >&2; exit 2; }
  LAB_ID=$(lab_id)
  RUN="$OUT/run-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$RUN"
  echo "$LL_NAME: artifacts in $RUN"
}

# ---- peers ---------------------------------------------------------------------------------------
_launch() { # NAME HOST KIND MATCH CMD... : start CMD in HOST with a FIFO on stdin, log to $RUN/NAME.log
  local name=$1 host=$2 kind=$3 match=$4 fd fifo
  shift 4
  fifo="$RUN/$name.in"
  rm -f "$fifo"
  mkfifo "$fifo"
  "$LAB" exec "$host" "$@" <"$fifo" >"$RUN/$name.log" 2>"$RUN/$name.err" &
  PPID_[$name]=$!
  ALLPIDS+=($!)
  PKIND[$name]=$match
  exec {fd}>"$fifo"
  PFD[$name]=$fd
  PLOG[$name]="$RUN/$name.log"
  EN_T[$name]=""
}
start_peer() { # NAME HOST ARGS... : an aalink peer (Link enabled at start unless --start-disabled)
  local name=$1 host=$2
  shift 2
  _launch "$name" "$host" aalink aalink_peer "$PY" "$PEER" --name "$name" --log-changes --max-runtime 600 "$@"
}
start_tutti() { # NAME HOST ARGS... : a Tutti peer on the lab interface only (Link enabled at start)
  local name=$1 host=$2
  shift 2
  _launch "$name" "$host" tutti "--serve" "$TUTTI" clock --serve --name "$name" --log-changes --interface eth0 "$@"
}
is_tutti() { [[ ${PKIND[$1]} == "--serve" ]]; }
send() { # NAME JSON : sends JSON plus an "id"; sets LAST_ID
  NEXT_ID=$((NEXT_ID + 1))
  LAST_ID=$NEXT_ID
  printf '%s\n' "${2%\}},\"id\":$LAST_ID}" 1>&"${PFD[$1]}" 2>/dev/null
}
ack_t() { # NAME ID [FIELD] : t0 (or FIELD) of the command's ack (CLOCK_MONOTONIC ns just before the call)
  "$PY" "$LOGQ" wait "${PLOG[$1]}" --ev ack "id=$2" --settle-ms 0 --timeout 3 --print "${3:-t0}"
}
seen() { # NAME AFTER_NS TIMEOUT_S KEY=VALUE... : earliest change/callback line after AFTER_NS
  local name=$1 after=$2 timeout=$3
  shift 3
  "$PY" "$LOGQ" wait "${PLOG[$name]}" --ev change,callback --after "$after" --timeout "$timeout" --print t "$@"
}
hello_t() { "$PY" "$LOGQ" wait "${PLOG[$1]}" --ev hello --settle-ms 0 --timeout 5 --print "${2:-t_enabled}"; }
enabled_t() { # NAME : when the peer's Link was enabled (CLOCK_MONOTONIC ns); sets EN_T[NAME]
  # aalink started normally: hello's t_enabled (the return of `enabled = True`; Link 4 may apply it
  # up to 0.5 s later). aalink --start-disabled: enable_peer sets it. Tutti: Link starts before
  # the hello line is printed, so hello's t is a bound just after enabling.
  local t
  if [[ -z ${EN_T[$1]} ]]; then
    if is_tutti "$1"; then t=$(hello_t "$1" t); else t=$(hello_t "$1" t_enabled); fi
    [[ $t == null ]] && t=""
    EN_T[$1]=$t
  fi
  printf '%s\n' "${EN_T[$1]}"
}
enable_peer() { # NAME : enable an aalink peer started with --start-disabled; EN_T[NAME] := ack t1
  send "$1" '{"cmd":"enable"}'
  EN_T[$1]=$(ack_t "$1" "$LAST_ID" t1)
}
state() { # NAME FIELD : request a state line, print FIELD (Tutti's state lines carry no id: match by time)
  local after
  after=$(now_ns)
  send "$1" '{"cmd":"state"}'
  "$PY" "$LOGQ" wait "${PLOG[$1]}" --ev state --after "$after" --settle-ms 0 --timeout 3 --print "$2"
}
peer_alive() { local pid=${PPID_[$1]}; kill -0 "$pid" 2>/dev/null && grep -qa -- "${PKIND[$1]}" "/proc/$pid/cmdline" 2>/dev/null; }
close_fd() { local fd=${PFD[$1]:-}; [[ -n $fd ]] && { exec {fd}>&-; } 2>/dev/null; PFD[$1]=""; }
wait_exit() { # NAME TIMEOUT_S : wait for the peer process to exit; sets WAIT_RC to its exit status
  local name=$1 i
  for ((i = 0; i < ${2%.*} * 50; i++)); do peer_alive "$name" || break; sleep 0.02; done
  if peer_alive "$name"; then WAIT_RC="still running"; return; fi
  wait "${PPID_[$name]}" 2>/dev/null
  WAIT_RC=$?
}
stop_peers() { # NAME... : quit (BYEBYE) all at once, then TERM/KILL any that hang
  local n i alive
  for n in "$@"; do
    peer_alive "$n" && send "$n" '{"cmd":"quit"}'
    close_fd "$n"
  done
  for ((i = 0; i < 150; i++)); do
    alive=0
    for n in "$@"; do peer_alive "$n" && alive=1; done
    ((alive)) || break
    sleep 0.02
  done
  for n in "$@"; do peer_alive "$n" && kill -TERM "${PPID_[$n]}" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do
    alive=0
    for n in "$@"; do peer_alive "$n" && alive=1; done
    ((alive)) || break
    sleep 0.02
  done
  for n in "$@"; do
    peer_alive "$n" && kill -KILL "${PPID_[$n]}" 2>/dev/null
    wait "${PPID_[$n]}" 2>/dev/null || true
  done
}
stop_peer() { stop_peers "$1"; }

sample_window() { # SECONDS NAME... : sample every 1 ms on all NAMEs for SECONDS; sets WIN_START WIN_END
  local secs=$1
  shift
  sample_start "$@"
  nap "$secs"
  sample_stop "$@"
}
SAMPLE_IDS=()
sample_start() { # NAME... : every NAME samples every 1 ms from now on (sample_stop ends it)
  local n
  SAMPLE_IDS=()
  for n in "$@"; do send "$n" '{"cmd":"sample","every_ms":1}'; SAMPLE_IDS+=("$n:$LAST_ID"); done
}
sample_stop() { # NAME... : ends the sampling sample_start began; sets WIN_START WIN_END (all sampling)
  local n t x ids=("${SAMPLE_IDS[@]}")
  for n in "$@"; do send "$n" '{"cmd":"sample","every_ms":0}'; ids+=("$n:$LAST_ID"); done
  WIN_START=0
  WIN_END=""
  local k=0 total=$((${#ids[@]} / 2))
  for x in "${ids[@]}"; do
    t=$(ack_t "${x%%:*}" "${x#*:}")
    if ((k < total)); then
      if [[ -n $t ]] && ((t > WIN_START)); then WIN_START=$t; fi
    elif [[ -n $t ]] && { [[ -z $WIN_END ]] || ((t < WIN_END)); }; then
      WIN_END=$t
    fi
    k=$((k + 1))
  done
}

agreement() { # TAG [tutti-link-agreement options] FILE... : phase agreement of the logs, sets AG_JSON
  local tag=$1
  shift
  AG_JSON="$RUN/agreement-$tag.json"
  "$AGREE" --start-ns "$WIN_START" --end-ns "$WIN_END" --json "$AG_JSON" "$@" | sed 's/^/  /'
}

# ---- packet capture (inside a lab host; tcpdump writes to our stdout, so no file permissions) ----
CAP_PID=""
capture_start() { # HOST FILE [FILTER...] : tcpdump on HOST's eth0; sets CAP_PID
  local host=$1 file=$2 i
  shift 2
  (($#)) || set -- udp port 20808
  "$LAB" exec "$host" tcpdump -i eth0 -U -n -w - "$@" >"$file" 2>"$file.err" &
  CAP_PID=$!
  CAPS+=("$CAP_PID")
  for ((i = 0; i < 100; i++)); do grep -q 'listening on' "$file.err" 2>/dev/null && break; sleep 0.02; done
}
capture_stop() { # PID
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null && grep -qa tcpdump "/proc/$pid/cmdline" 2>/dev/null && kill -INT "$pid" 2>/dev/null
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
  wait "$pid" 2>/dev/null || true
}

# ---- teardown ------------------------------------------------------------------------------------
LL_EXTRA_CLEANUP="" # a function name the script may set, run first during cleanup
LL_POST_CLEANUP=""  # a function name run once every peer has exited
cleanup() {
  trap - EXIT INT TERM
  local n pid i alive
  [[ -n $NAP_PID ]] && kill "$NAP_PID" 2>/dev/null
  [[ -n $LL_EXTRA_CLEANUP ]] && "$LL_EXTRA_CLEANUP"
  for pid in "${CAPS[@]}"; do capture_stop "$pid"; done
  for n in "${!PPID_[@]}"; do
    peer_alive "$n" && send "$n" '{"cmd":"quit"}'
    close_fd "$n"
  done
  for ((i = 0; i < 100; i++)); do
    alive=0
    for n in "${!PPID_[@]}"; do peer_alive "$n" && alive=1; done
    ((alive)) || break
    sleep 0.02
  done
  for n in "${!PPID_[@]}"; do peer_alive "$n" && kill -TERM "${PPID_[$n]}" 2>/dev/null; done
  sleep 0.2
  for n in "${!PPID_[@]}"; do peer_alive "$n" && kill -KILL "${PPID_[$n]}" 2>/dev/null; done
  for pid in "${ALLPIDS[@]}"; do wait "$pid" 2>/dev/null; done
  [[ -n $LL_POST_CLEANUP ]] && "$LL_POST_CLEANUP"
  if ((LAB_OURS)); then
    if lab_still_ours; then
      "$LAB" down >/dev/null 2>&1 || "$LAB" down
    else
      echo "$LL_NAME: the lab was re-created by someone else during the run; left it alone" >&2
    fi
  fi
  alive=0
  for n in "${!PPID_[@]}"; do peer_alive "$n" && { echo "$LL_NAME: peer $n (pid ${PPID_[$n]}) still running" >&2; alive=1; }; done
  [[ -n $RUN ]] && rm -f "$RUN"/*.in
  return $alive
}
on_exit() {
  local rc=$?
  cleanup || rc=1
  exit $rc
}
ll_traps() {
  trap on_exit EXIT
  trap 'echo "$LL_NAME: interrupted" >&2; exit 130' INT TERM
}
