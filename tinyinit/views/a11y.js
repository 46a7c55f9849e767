// What ipywidgets 8 leaves out for a screen reader, added on the page:
// * a slider's handle (role=slider) is named by the slider's description label
//   (aria-labelledby), or by its tooltip when it has no description;
// * a button that shows only a symbol (◀, ▶) is named by its tooltip;
// * a widget with the class tinyinit-live is a polite live region: when its text
//   changes (a readout after a slider move), a screen reader reads it out;
// * Tab leaves ipympl's canvas: the canvas sends every key to matplotlib, which would
//   hold the keyboard there (a keyboard trap, WCAG 2.1.2);
// * a RadioButtons widget is one radio group (role=radiogroup), named by its description,
//   the text just before it or its tooltip, whose radios share a name: Tab enters and leaves the group, the arrow
//   keys move the choice within it, as the WAI-ARIA radio group pattern has it (ipywidgets
//   gives each radio no name, so each was a group of its own, one Tab stop each).
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

function groupRadios(box) {
  if (box.getAttribute("role") === "radiogroup") return;
  const widget = box.closest(".widget-radio, .jupyter-widget-radio, .widget-inline-hbox");
  const label = widget && widget.querySelector(".widget-label");
  // Its name: its description, else the text just before it (a question's stem), else its
  // tooltip.
  const before = widget && widget.previousElementSibling;
  const namer = [label, before].find((e) => e && e.textContent.trim());
  box.setAttribute("role", "radiogroup");
  if (namer) {
    if (!namer.id) namer.id = `tinyinit-label-${++counter}`;
    box.setAttribute("aria-labelledby", namer.id);
  } else if (widget && widget.title) {
    box.setAttribute("aria-label", widget.title);
  }
  const name = `tinyinit-radios-${++counter}`;
  box.querySelectorAll("input[type=radio]").forEach((radio) => (radio.name = name));
  // JupyterLab's notebook takes the arrow keys (cell up, cell down) from anything focused in
  // a cell that is not a text field: within the group they are the group's. JupyterLab hears
  // keys as they bubble to the document, so the group keeps them from going further up.
  box.addEventListener("keydown", (event) => {
    if (event.key.startsWith("Arrow")) event.stopPropagation();
  });
  // ipywidgets hears a choice only as a click, and an arrow key checks a radio without one:
  // tell it of such a choice as the click it waits for (once checked, a click changes nothing).
  box.addEventListener("change", (event) => {
    const radio = event.target;
    if (radio instanceof HTMLInputElement && radio.type === "radio" && radio.checked) {
      radio.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    }
  });
}

export function accessible(root) {
  root.querySelectorAll("[role=slider]").forEach(labelSlider);
  root.querySelectorAll(".widget-radio-box").forEach(groupRadios);
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

const APPS =
  ".tinyinit-present, .tinyinit-explorer, .tinyinit-residual, .tinyinit-training, .tinyinit-inventory";

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
