# Quick start: `make lab` to read and explore, `make test` to check everything.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8888

# The static site's widget renderer and the accessibility checker, from npm (see `site`).
SITE_JS := build/site-js/node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js
AXE_JS  := build/site-js/node_modules/axe-core/axe.min.js
MATHJAX_JS := build/site-js/node_modules/mathjax/es5/tex-svg-full.js

NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: lab test unit notebooks bench bench-classroom lint clean site present student student-lab check mutation binder-badge

# One stamp per set of pyproject.toml, redone when it changes: .core is `pip install tinyinit`
# (the initializers, the numerics, the figures), .lab, .present and .test add that extra.
# test holds lab and present, and each holds the core, so a wider install stamps the narrower.
STAMPS := $(VENV)/.core $(VENV)/.lab $(VENV)/.present $(VENV)/.test
INCLUDED_core :=
INCLUDED_lab := core
INCLUDED_present := core
INCLUDED_test := core lab present

# uv installs them (pip puts uv in the venv first, in a few seconds): the test set takes it about
# 10 s where pip takes a minute, the same versions. Where uv cannot be had, pip does the install.
# uv compiles the bytecode as pip does: a Python that may not write it (PYTHONDONTWRITEBYTECODE
# set, a read-only install) would otherwise compile every module it imports at every start,
# a kernel's matplotlib and ipykernel among them: 2.7 times the CPU of a kernel's imports
# (benchmarks/bench_startup.py).
# A comma inside a $(call ...) argument would split it: an extras list names it $(comma).
comma := ,
pip_install = { $(VENV)/bin/uv --version >/dev/null 2>&1 || $(PY) -m pip install --quiet uv; } \
	&& $(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY) $(1) \
	|| $(PY) -m pip install --quiet $(1)

$(STAMPS): $(VENV)/.%: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(call pip_install,--upgrade pip)
	$(call pip_install,-e '.$(if $(filter-out core,$*),[$*])')
	touch $@ $(INCLUDED_$*:%=$(VENV)/.%)

# Jupyter refuses to run as root unless told; containers and fresh VMs often are root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# JupyterLab runs in the folder it serves, so that a terminal opened in it starts there, with
# this environment's Python first on PATH (scripts/jupyter_server_config.py): the README's
# `python -m tinyinit check my_init.py` works in it as written. LAB_ARGS adds options.
LAB_ARGS ?=
JUPYTER_LAB = $(abspath $(VENV))/bin/jupyter lab --config=$(abspath scripts/jupyter_server_config.py) \
	--port=$(PORT) $(ALLOW_ROOT) $(LAB_ARGS)

lab: $(VENV)/.lab
	cd notebooks && $(JUPYTER_LAB)

# Everything: lint, unit and property tests, doctests, strict nbval on every
# notebook, and the browser tests (skipped, with a note, where Chromium is absent). The
# checker's sandbox tests need bubblewrap (skipped, with a note, where it is absent). On
# Debian, once: apt-get install -y chromium bubblewrap (as .ci/run does).
# TEST_WORKERS processes share the files (pytest-xdist): a file's tests stay together in one,
# in order (a notebook's cells, a module's fixtures). TEST_WORKERS=0 runs them in this one.
# The longest files are handed out first (LONGEST_FIRST in tests/conftest.py); xdist's own
# reordering, by the number of tests in a file, would start a few long tests last.
# Three on two cores: a browser test spends much of its time waiting (for a page, a server, a
# kernel), and a third process keeps the cores busy meanwhile. Measured on 2 cores, in turns
# (two, three, three, two): 685 s, 620 s, 636 s, 662 s, three 1.04 to 1.10 times as fast.
# Each process, and each kernel it starts, runs numpy on one BLAS thread: the matrices here are
# small, and two processes' OpenBLAS threads on two cores wait for each other (a 128-wide
# product ten times slower). The notebooks' numbers are the same on one thread as on two.
# The notebooks that train (11, 13) store accuracies after many steps, where a last-bit
# difference in a matrix product or an exp grows into another percent. OpenBLAS picks its
# kernels by the CPU (SkylakeX, Haswell, Zen... each rounds a sum in its own order), and numpy
# its exp, log and tanh loops (AVX-512 ones where the CPU has it, rounding otherwise than the
# AVX2 ones), so the same notebook computes other digits on another machine. They are executed
# and checked on one set of both, AVX2's and FMA's (which x86-64 machines of the last ten years
# have): OpenBLAS's Haswell kernels, numpy's X86_V3 loops. The claims are asserted by the cells
# and held on each set tried (Haswell, SkylakeX, Cooperlake and Sandybridge on notebook 13,
# AVX-512 numpy on Intel and AVX2 numpy on AMD on 11 and 13): only the digits move.
# The README and the pages of docs/: their `>>>` examples run as doctests.
DOC_PAGES := README.md docs
DOCTEST_MD := --doctest-glob=README.md --doctest-glob='docs/*.md'
PIN_BLAS := OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"
TEST_WORKERS ?= 3
test: $(VENV)/.test $(SITE_JS) $(MATHJAX_JS) $(AXE_JS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PIN_BLAS) \
	$(PY) -m pytest tests tinyinit $(DOC_PAGES) notebooks --doctest-modules $(DOCTEST_MD) $(NBVAL) \
		-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

unit: $(VENV)/.test
	$(PY) -m pytest tests tinyinit $(DOC_PAGES) --doctest-modules $(DOCTEST_MD) -m "not browser"

# Re-execute every notebook in place after a change to tinyinit, so that the
# stored outputs are what the code computes now (strict nbval checks them).
notebooks: $(VENV)/.test
	$(PIN_BLAS) $(PY) scripts/execute_notebooks.py notebooks/*.ipynb

# The live explorers as a classroom app (Voila: large type, demonstration presets,
# no code): opens http://127.0.0.1:$(PRESENT_PORT)/ in a browser. Ctrl+C stops it.
# SHARE_URL=... shows students where to open the same explorer (link and QR code).
PRESENT_PORT ?= 8866
SHARE_URL ?=
present: $(VENV)/.present
	$(PY) -m tinyinit present --port $(PRESENT_PORT) $(if $(SHARE_URL),--share-url '$(SHARE_URL)')

# The course as a static web site (stored outputs, no kernel): open site/index.html.
# `make site` builds the student edition into site/, the one to publish: what `make student`
# writes, no solution in its pages or downloads. `make site EDITION=teacher` builds the
# teacher's, solutions in and labelled so on every page, into site-teacher/. REPO=https://...
# (a GitHub repository; REPO_PATH its folder of notebooks, default notebooks) adds the
# repository and Binder buttons, HUB=https://... a JupyterHub's (nbgitpuller); without them
# there are no launch buttons. Sphinx + MyST-NB + sphinx-book-theme (Jupyter Book 1's
# stack), configured in site_src/.
# It works offline: require.js and ipympl come from Python packages, MathJax 3 and the widget
# renderer from npm, installed here into build/ (git-ignored) once, with axe-core, which
# the accessibility test (tests/browser/test_accessibility.py) runs on every page.
# One install puts all three there; the other rules wait for it (make -j runs rules side by side).
NPM_SITE_JS := npm install --prefix build/site-js --no-save --no-audit --no-fund --loglevel=error \
	@jupyter-widgets/html-manager@1.0.15 mathjax@3.2.2 axe-core@4.14.1
$(SITE_JS):
	$(NPM_SITE_JS)
$(MATHJAX_JS) $(AXE_JS): | $(SITE_JS)
	test -f $@ || $(NPM_SITE_JS)

EDITION ?= student
REPO ?=
REPO_PATH ?= notebooks
HUB ?=
SITE_DIR := $(if $(filter teacher,$(EDITION)),site-teacher,site)
site: $(VENV)/.test $(SITE_JS) $(MATHJAX_JS)
	$(PY) scripts/build_site.py --edition $(EDITION) --output $(SITE_DIR) \
		$(if $(REPO),--repository '$(REPO)' --repository-path '$(REPO_PATH)') \
		$(if $(HUB),--hub '$(HUB)')

# The README's Binder badge for the published repository: `make binder-badge REPO=https://...`
# prints it, the same address the site's launch buttons open, on the student edition that
# postBuild writes on Binder.
binder-badge: $(VENV)/.test
	$(if $(REPO),,$(error binder-badge needs REPO=, the repository's GitHub address))
	@$(PY) scripts/build_site.py --binder-badge student --repository '$(REPO)'

# The student edition in student/: the notebooks with every exercise's solution replaced by
# `raise NotImplementedError()` (nbgrader's convention), the exercise cells' outputs and the
# answers to predictions cleared, the teacher's own notes left out, and my_init.py stubbed.
# It never writes over a student's work in student/ (FORCE=1 does); `make student-lab` opens
# the edition there, making it first if there is none. The code is the package's
# (tinyinit/course/student_edition.py), which `python -m tinyinit student DIR` runs on the
# notebooks a pip install of tinyinit ships, for a student without this repository.
# STUDENT=... writes and opens the edition elsewhere. `make check` runs the module card's
# tests on its my_init.py, as `python -m tinyinit check my_init.py` does in the edition's folder.
STUDENT ?= student
MAKE_STUDENT := $(PY) scripts/make_student.py --output $(STUDENT) $(if $(FORCE),--force)
student: $(VENV)/.lab
	$(MAKE_STUDENT)
	@echo "Open it with: make student-lab   (JupyterLab on $(STUDENT)/)"

student-lab: $(VENV)/.lab
	test -d $(STUDENT) || $(MAKE_STUDENT)
	cd $(STUDENT) && $(JUPYTER_LAB)

# The recipe ends with the checker's status (0 pass, 1 a test failed, 2 the file could not be
# checked) and names it; make reports any status but 0 as a failed command and exits 2 itself.
check: $(VENV)/.core
	@$(PY) -m tinyinit check $(STUDENT)/my_init.py; status=$$?; \
	if [ $$status -ne 0 ]; then echo "make check: the checker exited $$status" >&2; fi; \
	exit $$status

bench: $(VENV)/.test
	$(PY) benchmarks/bench_init.py
	$(PY) benchmarks/bench_check.py

# Do the tests fail when the code is wrong? mutmut changes init, pcg32, distributions
# and propagation one operator or constant at a time (configuration: [tool.mutmut] in
# pyproject.toml) and runs, for each change, the unit tests that call the changed function.
# Slow (about an hour on two cores), so not part of `make test`. One module at a time:
# make mutation MUTANTS='tinyinit.core.pcg32.*'; results are kept in mutants/, so a second run
# tries only what is new. `$(VENV)/bin/mutmut results` lists the survivors, `mutmut show
# NAME` shows one; docs/mutation.md has the last scores and the equivalent mutants. BLAS is
# pinned to one thread, as for the tests: each child's QRs then keep to their own core.
MUTANTS ?=
MUTATION_CHILDREN ?= $(shell $(PY) -c "import os; print(len(os.sched_getaffinity(0)))")
mutation: $(VENV)/.test
	$(call pip_install,-e '.[test$(comma)mutation]')
	$(PIN_BLAS) $(VENV)/bin/mutmut run --max-children $(MUTATION_CHILDREN) $(MUTANTS)
	$(VENV)/bin/mutmut results

# How many students one server holds: a real JupyterHub on 127.0.0.1 with simulated students
# in Chromium, class sizes 1, 5, 10 and on while it holds (about 40 minutes; not part of
# `make test`). Options: make bench-classroom CLASSROOM_ARGS="--students 1,5 --duration 20".
# The proxy comes from npm into build/chp (git-ignored); jupyterhub from the `classroom` extra.
CHP := build/chp/node_modules/.bin/configurable-http-proxy
CLASSROOM_ARGS ?= --markdown build/classroom.md

$(VENV)/.classroom: pyproject.toml $(VENV)/.test
	$(call pip_install,-e '.[test$(comma)classroom]')
	touch $@

$(CHP):
	npm install --prefix build/chp --no-audit --no-fund --loglevel=error configurable-http-proxy@5
	test -x $@

bench-classroom: $(VENV)/.classroom $(CHP)
	$(PY) benchmarks/bench_classroom.py --proxy $(CHP) $(CLASSROOM_ARGS)

lint: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache mutants
