VENV := .venv
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: test results docs clean-cache sitting

# Reinstall only when the package metadata changes; the install is editable, so code changes need nothing.
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -e '.[test]'
	touch $(STAMP)

# The documentation's tools (the `docs` extra), installed beside the package; reinstalled only when
# the package metadata changes, as above.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -e '.[docs]'
	touch $(DOCS_STAMP)

# PYTEST_ARGS: extra pytest options (.ci/run passes --hypothesis-profile=ci).
test: $(STAMP)
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# make results: the quick profile (workflow/configs/quick.yaml) -> results/quick/;
# make results PROFILE=paper: the paper's full setting (config.yaml alone) -> results/paper/.
results: PROFILE ?= quick
results: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) $(if $(filter-out paper,$(PROFILE)),--configfile workflow/configs/$(PROFILE).yaml)

# make sitting TAG=<tag>: one sitting of the full-size run, all of it from one tagged commit. The code runs
# from a clean checkout of TAG in .sitting/ (so every record and journal names TAG), on this checkout's
# prepared data; summaries and journals land in this checkout's reproduction/, to commit as they come.
# A later sitting, here or on a fresh clone, resumes from them: finished jobs are not planned again, and
# a job cut short resumes at its first unfinished round. SNAKEMAKE_ARGS: more options or target files
# (absolute paths: the jobs run in .sitting/), before --config, which takes every word after it.
# PUBLISH_DIR: where they land; a new tag's run goes to reproduction/next/ so that the published folder
# stays whole, one commit's, until the new run replaces it. MINUTES: the sitting's time; its targets are
# then the jobs `alphaseed sitting` picks (whole groups of one dataset and k first: one machine's ratios;
# none whose closest pairs ran on another CPU model only), at the seconds the published run took them.
# SITTING_ARGS: more of its options (--any-cpu).
SITTING := .sitting
SITTING_TARGETS := $(CURDIR)/results/sitting-targets.txt
PUBLISH_DIR ?= reproduction
sitting: $(STAMP)
	test -n "$(TAG)" || { echo "make sitting: give TAG, the tagged commit of the run" >&2; exit 2; }
	git rev-parse -q --verify '$(TAG)^{commit}' >/dev/null || { echo "make sitting: no tag $(TAG) in this \
	clone (a clone fetches no tag that was never pushed); tag the commit that reproduction/runs' records \
	name (provenance.git_commit): git tag -a $(TAG) <commit>" >&2; exit 2; }
	test -d $(SITTING) || git worktree add --detach $(SITTING) $(TAG)
	test "$$(git -C $(SITTING) rev-parse HEAD)" = "$$(git rev-parse '$(TAG)^{commit}')"
	mkdir -p data/processed && ln -sfn $(CURDIR)/data/processed $(SITTING)/data/processed
	$(if $(MINUTES),mkdir -p results && $(VENV)/bin/alphaseed sitting --config $(SITTING)/config.yaml \
		--minutes $(MINUTES) --summaries $(PUBLISH_DIR)/runs --measured reproduction/runs $(SITTING_ARGS) \
		> $(SITTING_TARGETS) && { test -s $(SITTING_TARGETS) || { echo "make sitting: alphaseed sitting chose \
		no job (it says why above); nothing run" >&2; exit 1; }; })
	cd $(SITTING) && PYTHONPATH=$(CURDIR)/$(SITTING)/src $(CURDIR)/$(VENV)/bin/snakemake --cores $(CORES) \
		$(SNAKEMAKE_ARGS) $(if $(MINUTES),$$(cat $(SITTING_TARGETS))) --config publish_dir=$(CURDIR)/$(PUBLISH_DIR)

# make docs: the documentation site -> docs/_build/html (warnings are errors, all of them reported).
# The API pages' stubs are regenerated each time: a stub left from a removed object would fail it.
docs: $(DOCS_STAMP)
	rm -rf docs/api/generated
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

# Numba's on-disk cache does not notice when a jitted function in another module changes; after
# editing the solver or the kernels, drop it (a fresh clone has none).
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
