# shellcheck shell=bash
# The harness every test script under scripts/ shares: counted PASS/FAIL lines, the three kinds of check
# (each with its own name: a JSON document, a shell condition, a command), the summary line and exit
# status, and the lab session lock. Sourced, never run:
#   source "$REPO/scripts/lib/harness.sh"
#
# Counters: PASSED and FAILED. HARNESS_RECORD, when set, names a function that is also given each result
# as "PASS<TAB>text" or "FAIL<TAB>text" (the Link tests keep them in checks.tsv for their JSON summary).

# Sourced once per shell (a library that needs it sources it too, the script may have already).
[[ -z ${TUTTI_HARNESS_LOADED:-} ]] || return 0
TUTTI_HARNESS_LOADED=1

PASSED=0
FAILED=0
HARNESS_RECORD=""

pass() {
  PASSED=$((PASSED + 1))
  echo "PASS: $*"
  [[ -z $HARNESS_RECORD ]] || "$HARNESS_RECORD" "PASS	$*"
}

fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL: $*"
  [[ -z $HARNESS_RECORD ]] || "$HARNESS_RECORD" "FAIL	$*"
}

# check_json DESCRIPTION PYTHON-EXPRESSION [SHOWN]   reads one JSON document from stdin as `data`; passes when
# the expression is true, else fails showing SHOWN (a Python expression over `data`: the figures the check is
# about) or, without it, the start of the document.
check_json() {
  local description=$1 expression=$2 shown=${3:-} json
  json=$(cat)
  if python3 -c "import json,sys; data=json.loads(sys.argv[1]); sys.exit(0 if ($expression) else 1)" "$json"; then
    pass "$description"
  elif [[ -n $shown ]]; then
    fail "$description — got: $(python3 -c "import json,sys; data=json.loads(sys.argv[1]); print($shown)" "$json" 2>&1 | tail -1)"
  else
    fail "$description — got: $(python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]))[:800])' "$json" 2>/dev/null || echo "${json:0:600}")"
  fi
}

# check_condition DESCRIPTION SHELL-CONDITION   passes when the condition (a string, eval'd) holds.
check_condition() {
  if eval "$2"; then pass "$1"; else fail "$1"; fi
}

# check_command DESCRIPTION COMMAND [ARG...]   passes when the command succeeds.
check_command() {
  local description=$1
  shift
  if "$@"; then pass "$description"; else fail "$description"; fi
}

# at_most VALUE LIMIT   succeeds when the number VALUE is at most LIMIT (decimals: awk compares them).
at_most() {
  [[ -n ${1:-} ]] && awk -v value="$1" -v limit="$2" 'BEGIN { exit !(value + 0 <= limit + 0) }'
}

# harness_summary   prints "N passed, M failed"; its status is 0 only when nothing failed.
harness_summary() {
  echo "$PASSED passed, $FAILED failed"
  [[ $FAILED -eq 0 ]]
}

# The lab session lock: one user of the lab (test, demo or bench) at a time on a machine. The lab is only
# for root (network namespaces); other users do not take the lock.
LAB_SESSION_LOCK=/run/lock/tutti-lab-session.lock

# lab_session_hold NAME SCRIPT [ARG...]   (call it as `lab_session_hold NAME "$0" "$@"` before anything
# else): as root, unless this process tree already holds it, says so if another lab user has the lock,
# then runs the script again under `flock -o`, which holds the lock until it exits and never hands it to
# a child (a daemon the script leaves running cannot keep the lab locked). Returns only when held (or not
# root).
lab_session_hold() {
  local name=$1
  shift
  [[ -z ${TUTTI_LAB_SESSION_HELD:-} && $(id -u) -eq 0 ]] || return 0
  if ! flock -n "$LAB_SESSION_LOCK" true 2>/dev/null; then
    echo "$name: waiting for $LAB_SESSION_LOCK (another lab user: a test, the demo or the bench)" >&2
  fi
  TUTTI_LAB_SESSION_HELD=1 exec flock -o "$LAB_SESSION_LOCK" "$@"
}
