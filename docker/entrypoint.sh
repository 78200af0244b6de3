#!/bin/sh
# Entry point of the wattsched scheduler image: pybatsim binds the REP socket that Batsim connects to.
#
#   WATTSCHED_SCHEDULER  scheduler name registered under the `pybatsim.schedulers` entry point
#                        (easy-backfill, fcfs, ...); default easy-backfill
#   WATTSCHED_OPTIONS    scheduler options: a JSON object, or @path/to/options.json; default {}
#   WATTSCHED_SOCKET     endpoint to bind; default tcp://*:28000 (every interface of the container)
#   WATTSCHED_LINGER_S   seconds to stay up after a successful run; default 30 (see below)
#
# `-t -1` disables pybatsim's receive timeout (its 2 s default aborts on slow simulations).
# Arguments given to the container are passed on to pybatsim.
set -eu
: "${WATTSCHED_SCHEDULER:=easy-backfill}"
: "${WATTSCHED_OPTIONS:={\}}"
: "${WATTSCHED_SOCKET:=tcp://*:28000}"
: "${WATTSCHED_LINGER_S:=30}"

# pybatsim's launcher opens an @file itself: one that is missing (not mounted into the container) or a folder ended in
# its traceback. Said on one line here, as the scheduler's own errors are (`pybatsim: error: ...`, status 2).
case "$WATTSCHED_OPTIONS" in
    @*)
        options_file=${WATTSCHED_OPTIONS#@}
        if [ ! -f "$options_file" ] || [ ! -r "$options_file" ]; then
            echo "wattsched-entrypoint: error: WATTSCHED_OPTIONS=$WATTSCHED_OPTIONS: no readable file $options_file in" \
                 "the container (mount it, or give the options as JSON text)" >&2
            exit 2
        fi
        ;;
esac

pybatsim -t -1 -s "$WATTSCHED_SOCKET" "$WATTSCHED_SCHEDULER" -o "$WATTSCHED_OPTIONS" "$@"

# The scheduler answers SIMULATION_ENDS before Batsim writes its output files. With
# `docker compose up --abort-on-container-exit`, the first container to exit stops the others: staying
# up a little lets Batsim exit first, after writing its outputs (compose then stops this container).
if [ "$WATTSCHED_LINGER_S" != "0" ]; then
    exec sleep "$WATTSCHED_LINGER_S"
fi
