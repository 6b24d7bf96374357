#!/usr/bin/env bash
# The body of action.yml. It installs the alsim wheel whose version is the action's own (read from the
# Cargo.toml beside the action, the one place a version is written) into a fresh virtual environment,
# runs `alsim pins check --format github`, and turns alsim's exit status into the job's:
# 1 (a problem found) and 2 (alsim could not run the check) fail the step, 3 (undecided) is a warning.
#
# What runs is what the release published, or nothing:
# - a wheel only (`--only-binary :all:`), of exactly that version: where the runner has no matching wheel,
#   pip fails rather than quietly building the sdist with whatever compiler the runner has;
# - a new virtual environment each time (mktemp, removed on exit), never one found under RUNNER_TEMP: a
#   venv left by an earlier step could hold any `alsim` that prints the right `--version`, and checking a
#   reused one by hash would need the wheel hashes of every platform recorded here before the release
#   exists. A second use in a job pays one more install, from pip's cache.
# Written for bash 3.2 too (macOS runners). .ci/run runs this same script against a locally built wheel.
set -euo pipefail

root="${GITHUB_ACTION_PATH:?set by action.yml to the checkout of the action}"
version=$(awk -F'"' '/^\[/ { pkg = ($0 == "[package]") } pkg && /^version *=/ { print $2; exit }' "$root/Cargo.toml")
if [[ -z $version ]]; then
  echo "::error title=alsim pins check::no [package] version in $root/Cargo.toml"
  exit 2
fi

venv=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/alsim-venv.XXXXXX")
trap 'rm -rf "$venv"' EXIT
alsim="$venv/bin/alsim"
python3 -m venv "$venv"
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: "alsim==$version"; then
  echo "::error title=alsim pins check::no alsim $version wheel installs on this runner (see pip's message above); the action never builds alsim from source"
  exit 2
fi
installed=$("$alsim" --version)
if [[ $installed != "alsim $version" ]]; then
  echo "::error title=alsim pins check::the wheel installed '$installed' where alsim $version was asked for"
  exit 2
fi

args=(pins check "${ALSIM_PATH:-.}" --format github)
if [[ -n ${ALSIM_ALLOW:-} ]]; then
  args+=(--allow "$ALSIM_ALLOW")
fi
if [[ -n ${ALSIM_BASE:-} ]]; then
  # Joined with `=`, so a revision that starts with `-` stays the option's value.
  args+=("--base=$ALSIM_BASE")
fi
if [[ -n ${ALSIM_ARGS:-} ]]; then
  # Shell-like splitting without eval: Python's shlex, NUL-separated through a file so a bad quote stops here.
  split="$venv/args.bin"
  if ! "$venv/bin/python" -c 'import shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(sys.argv[1])))' \
    "$ALSIM_ARGS" > "$split" 2> "$split.err"; then
    echo "::error title=alsim pins check::cannot split the args input ($(tail -n 1 "$split.err")): $ALSIM_ARGS"
    exit 2
  fi
  while IFS= read -r -d '' word; do
    args+=("$word")
  done < "$split"
fi

status=0
"$alsim" "${args[@]}" || status=$?
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  echo "exit-code=$status" >> "$GITHUB_OUTPUT"
fi
case $status in
  0) ;;
  1)
    if [[ -n ${ALSIM_BASE:-} ]]; then
      echo "::error title=alsim pins check::pins disagree with the golden curves in ways new since $ALSIM_BASE (exit 1); see the annotations above"
    else
      echo "::error title=alsim pins check::pins disagree with the golden curves (exit 1); see the annotations above"
    fi
    exit 1
    ;;
  2)
    if [[ -n ${ALSIM_BASE:-} ]]; then
      echo "::error title=alsim pins check::alsim could not run the check (exit 2: usage or input error, e.g. a missing path or allow-list, or a base commit the checkout lacks: use actions/checkout with fetch-depth: 0); see its message above"
    else
      echo "::error title=alsim pins check::alsim could not run the check (exit 2: usage or input error, e.g. a missing path or allow-list); see its message above"
    fi
    exit 2
    ;;
  3)
    echo "::warning title=alsim pins check::some pins could not be resolved (exit 3, undecided); see the 'unresolved' warnings above"
    ;;
  *)
    echo "::error title=alsim pins check::alsim stopped with exit status $status"
    exit "$status"
    ;;
esac
