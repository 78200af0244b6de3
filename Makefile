# wattsched — the two commands of the README, and the slower targets.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo web test test-slow fuzz check-wheel bench replay golden reproduce-energy-budget reproduce-efs reproduce-esc reproduce-upas reproduce-eamc bench-traces clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# pybatsim 4.0.0a0 pins pyzmq<23, which has no Python 3.11 wheel: install it without its
	# dependencies; setup.cfg lists its real run-time dependencies with a current pyzmq.
	$(PY) -m pip install -q --no-deps pybatsim==4.0.0a0
	$(PY) -m pip install -q -e '.[test,pybatsim,web]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## EASY backfilling on the 16-host Taurus platform, embedded simulator
	$(VENV)/bin/wattsched run platforms/taurus_16.xml workloads/demo_taurus16.json \
		-s easy-backfill -e results/demo/easy
	$(VENV)/bin/wattsched plot results/demo/easy

web: $(STAMP)  ## the local web page on http://127.0.0.1:8000/ (workspace results/web)
	$(VENV)/bin/wattsched web --workspace results/web

# Tests run in one worker per core (pytest-xdist), at most 4: on CI's 2 cores the suite takes about 4 minutes
# instead of 7.5 in one process. TEST_WORKERS=0 runs them in this process (for pdb or -x).
TEST_WORKERS ?= auto
test: $(STAMP)  ## the CI suite (slow reproductions excluded)
	$(VENV)/bin/pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --maxprocesses 4)

# $(call positive_int,NAME): the value of variable NAME when it is one positive whole number (no leading zero),
# else make stops with an error line naming it (exit 2).
_digits_removed = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$($(1))))))))))))
positive_int = $(if $(and $(filter 1,$(words $($(1)))),$(if $(_digits_removed),,ok),$(filter-out 0%,$($(1)))),$(strip $($(1))),$(error $(1)=$($(1)): expected a positive whole number such as 600))

# FULL=1, yes or true: the papers' full sizes; 0, no, false or empty: the reduced ones; anything else stops make.
_FULL = $(strip $(FULL))
full_on = $(if $(_FULL),$(if $(and $(filter 1,$(words $(_FULL))),$(filter $(_FULL),1 yes true YES TRUE Yes True)),1,$(if $(and $(filter 1,$(words $(_FULL))),$(filter $(_FULL),0 no false NO FALSE No False)),,$(error FULL=$(FULL): expected 1, yes or true (full size) or 0, no, false or empty (reduced size)))),)

FUZZ_SECONDS ?= 600
FUZZ_EXAMPLES ?= 500
fuzz: $(STAMP)  ## hypothesis fuzzing of bad inputs for FUZZ_SECONDS (default 600), FUZZ_EXAMPLES per test and round
	@end=$$(( $$(date +%s) + $(call positive_int,FUZZ_SECONDS) )); round=0; \
	while [ $$(date +%s) -lt $$end ]; do \
		round=$$((round + 1)); echo "fuzz round $$round"; \
		WATTSCHED_FUZZ_EXAMPLES=$(call positive_int,FUZZ_EXAMPLES) $(VENV)/bin/pytest -q -x tests/test_fuzz.py || exit 1; \
	done

check-wheel:  ## a wheel in a fresh virtualenv (no pybatsim) runs `wattsched run` on inputs it generates
	sh tests/check_wheel.sh $(PYTHON)

test-slow: $(STAMP)  ## paper reproductions and large-scale runs
	$(VENV)/bin/pytest -q -m slow

replay: $(STAMP)  ## replay every recording of real Batsim
	$(VENV)/bin/wattsched replay tests/fixtures/batsim-reference/*/

bench: $(STAMP)  ## simulator, scheduler and preset benchmarks (figures for the README, ~30 min on 2 cores)
	$(PY) benchmarks/bench_simulator.py
	$(PY) benchmarks/bench_scheduler.py
	$(PY) benchmarks/bench_presets.py

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis

golden: $(STAMP)  ## regenerate the golden outputs of every preset (review the diff before committing)
	$(PY) -m tests.test_golden --update

bench-traces: $(STAMP)  ## EASY and each energy preset over the whole SDSC-Blue and Curie logs (mirror: WATTSCHED_PWA; ONLY=easy-backfill)
	$(PY) benchmarks/bench_traces.py $(if $(ONLY),--only '$(subst ','\'',$(ONLY))',)

reproduce-energy-budget: $(STAMP)  ## energy-budget paper §V: report + figures 2-5 (reduced size; FULL=1 for the paper's)
	$(VENV)/bin/wattsched reproduce energy-budget --out results/energy-budget $(if $(full_on),--full,)

reproduce-efs: $(STAMP)  ## EFS paper §IV: Light-ESP x4 (figures 2-3) + table I (reduced size; FULL=1 for whole logs)
	$(VENV)/bin/wattsched reproduce efs --out results/efs $(if $(full_on),--full,)

reproduce-esc: $(STAMP)  ## ESC paper §3: NASA and OSC, always-on vs ESC; report + figures in docs/results/esc (FULL=1: also NASA-like)
	$(VENV)/bin/wattsched reproduce esc --out results/esc --report-dir docs/results/esc $(if $(full_on),--full,)

reproduce-upas: $(STAMP)  ## UPAS paper §4: EASY vs UPAS on five machines and enlarged ones; report + figures in docs/results/upas (FULL=1: more variants)
	$(VENV)/bin/wattsched reproduce upas --out results/upas --report-dir docs/results/upas $(if $(full_on),--full,)

reproduce-eamc: $(STAMP)  ## EAMC paper §5: figures 3-5, report in docs/results/eamc (reduced size; FULL=1: 512+512 nodes, 5,000 jobs)
	$(VENV)/bin/wattsched reproduce eamc --out results/eamc$(if $(full_on),-full,) --report-dir docs/results/eamc$(if $(full_on),-full,) $(if $(full_on),--full,)
