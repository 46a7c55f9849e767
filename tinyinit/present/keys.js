// The presenter clicker's keys and the page's size, as an anywidget module (shipped inside
// the package: nothing is fetched; tinyinit.present.keys.PresenterKeys). One keydown
// listener on the document, in the capture phase so that it sees the key before the page
// scrolls or a canvas takes it.
const NEXT = new Set(["PageDown", "ArrowRight"]);
const PREVIOUS = new Set(["PageUp", "ArrowLeft"]);
// Focused elements for which these keys already mean something: they keep them.
const OWN_KEYS = [
  "input:not([type=button]):not([type=checkbox]):not([type=radio]):not([type=submit])",
  "select", "textarea", "[contenteditable='']", "[contenteditable=true]",
  "[role=slider]", "[role=tab]", "[role=listbox]", "[role=combobox]", "[role=menu]",
  ".noUi-handle", ".cm-editor",
].join(", ");

function inView(element) {
  if (!element || !element.isConnected) return false;
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.bottom > 0 && box.top < window.innerHeight;
}

function render({ model, el }) {
  const app = () => el.closest(".tinyinit-present");
  let lastKey = { target: null, time: 0 };

  const onKey = (event) => {
    lastKey = { target: event.target, time: Date.now() };
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = event.target instanceof Element ? event.target : null;
    const root = app();
    if (event.key === "Escape") {
      // Give the keys back to the clicker: the focused control lets go.
      if (target && root && root.contains(target)) target.blur();
      return;
    }
    const step = NEXT.has(event.key) ? 1 : PREVIOUS.has(event.key) ? -1 : 0;
    if (step === 0 || event.tinyinitStep !== undefined) return;  // one step per key press
    if (target && target.closest(OWN_KEYS)) return;
    if (!inView(root)) return;
    event.tinyinitStep = step;
    event.preventDefault();  // no scrolling: the app fits the page
    event.stopPropagation();
    model.send({ step });
  };

  // A demonstration picked with the mouse leaves the menu focused, where the
  // clicker's next PageDown would pick another one: the menu lets go. Picked
  // with the keyboard, it keeps the focus and its keys.
  const onChange = (event) => {
    const target = event.target;
    if (!(target instanceof HTMLSelectElement) || !target.closest(".tinyinit-preset")) return;
    const keyed = lastKey.target === target && Date.now() - lastKey.time < 1000;
    if (!keyed) target.blur();
  };

  // The page's size and where the plot starts, so the kernel can fit the plot.
  let sent = "";
  const report = () => {
    const root = app();
    if (!root) return;
    // The top of what the open tab shows: a plot, or the students' link.
    const areas = [...root.querySelectorAll(".tinyinit-plot-area, .tinyinit-share-view")];
    const area = areas.find((a) => a.offsetParent !== null);
    if (!area) return;
    const top = area.getBoundingClientRect().top + window.scrollY;
    const page = {
      width: Math.round(root.getBoundingClientRect().width),
      height: window.innerHeight,
      top: Math.round(top),
    };
    const text = JSON.stringify(page);
    if (text === sent) return;
    sent = text;
    model.set("page", page);
    model.save_changes();
  };
  let pending = null;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(report, 100);
  };
  const resizes = new ResizeObserver(soon);
  let alive = true;
  const start = () => {
    if (!alive) return;
    const root = app();
    if (!root) return setTimeout(start, 100);  // not yet on the page
    resizes.observe(root);
    soon();
  };

  document.addEventListener("keydown", onKey, true);
  document.addEventListener("change", onChange, true);
  window.addEventListener("resize", soon);
  start();
  return () => {
    alive = false;
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("change", onChange, true);
    window.removeEventListener("resize", soon);
    resizes.disconnect();
    clearTimeout(pending);
  };
}
export default { render };
