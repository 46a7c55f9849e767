// What ipywidgets 8 leaves out for a screen reader, added on the page:
// * a slider's handle (role=slider) is named by the slider's description label
//   (aria-labelledby), or by its tooltip when it has no description;
// * a button that shows only a symbol (◀, ▶) is named by its tooltip;
// * a widget with the class tinyinit-live is a polite live region: when its text
//   changes (a readout after a slider move), a screen reader reads it out;
// * Tab leaves ipympl's canvas: the canvas sends every key to matplotlib, which would
//   hold the keyboard there (a keyboard trap, WCAG 2.1.2).
// As an anywidget module (tinyinit.views.a11y.Accessible) it looks after the app it sits
// in; the static site calls watch(document.body) once for the whole page.

let counter = 0;

function labelSlider(handle) {
  if (handle.hasAttribute("aria-label") || handle.hasAttribute("aria-labelledby")) return;
  const widget = handle.closest(".widget-slider, .jupyter-widget-slider, .widget-inline-hbox");
  if (!widget) return;
  const label = widget.querySelector(".widget-label");
  if (label && label.textContent.trim()) {
    if (!label.id) label.id = `tinyinit-label-${++counter}`;
    handle.setAttribute("aria-labelledby", label.id);
  } else if (widget.title) {
    handle.setAttribute("aria-label", widget.title);
  }
}

function nameSymbolButton(button) {
  if (button.hasAttribute("aria-label")) return;
  const text = button.textContent.trim();
  if (/[\p{L}\p{N}]/u.test(text) || !button.title) return;
  button.setAttribute("aria-label", button.title);
}

function makeLive(widget) {
  // The content element stays while its text is replaced: the region must outlive its text.
  const region = widget.querySelector(".widget-html-content") || widget;
  if (region.getAttribute("aria-live") === "polite") return;
  region.setAttribute("aria-live", "polite");
  region.setAttribute("aria-atomic", "true");
}

export function accessible(root) {
  root.querySelectorAll("[role=slider]").forEach(labelSlider);
  root.querySelectorAll("button").forEach(nameSymbolButton);
  root.querySelectorAll(".tinyinit-live").forEach(makeLive);
}

// Apply accessible() to root now and whenever widgets are added under it; returns a stop function.
function letTabGo(event) {
  const target = event.target instanceof Element ? event.target : null;
  if (event.key === "Tab" && target && target.closest(".jupyter-matplotlib-canvas-div")) {
    event.stopPropagation(); // before ipympl's own listener; the browser then moves the focus
  }
}

export function watch(root) {
  let queued = false;
  const again = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      accessible(root);
    });
  };
  const observer = new MutationObserver(again);
  observer.observe(root, { childList: true, subtree: true });
  root.addEventListener("keydown", letTabGo, true);
  accessible(root);
  return () => {
    observer.disconnect();
    root.removeEventListener("keydown", letTabGo, true);
  };
}

const APPS = ".tinyinit-present, .tinyinit-explorer, .tinyinit-residual, .tinyinit-training";

function render({ el }) {
  let stop = null;
  let alive = true;
  const start = () => {
    if (!alive) return;
    if (!el.isConnected) return setTimeout(start, 100); // not on the page yet
    stop = watch(el.closest(APPS) || el.parentElement || document.body);
  };
  start();
  return () => {
    alive = false;
    if (stop) stop();
  };
}

export default { render };
