// The presenter clicker's keys and the page's size, as an anywidget module (shipped inside
// the package: nothing is fetched; tinyinit.present.keys.PresenterKeys). One keydown
// listener on the document, in the capture phase so that it sees the key before the page
// scrolls or a control takes it.
const NEXT = new Set(["PageDown", "ArrowRight"]);
const PREVIOUS = new Set(["PageUp", "ArrowLeft"]);
const ENDS = { Home: "first", End: "last" };
// A clicker's two buttons: they step wherever the focus is, except while typing.
const CLICKER = new Set(["PageDown", "PageUp"]);
// The blank screen, as in PowerPoint: B or . black, W or , white; any key brings it back.
const BLANK = { b: "#000", ".": "#000", w: "#fff", ",": "#fff" };
// Where a key is typed as text: every key keeps its meaning there.
const TYPING = [
  "input:not([type=button]):not([type=checkbox]):not([type=radio]):not([type=submit])"
    + ":not([type=range])",
  "textarea", "[contenteditable='']", "[contenteditable=true]", ".cm-editor",
].join(", ");
// Focused controls for which the arrows, Home and End already mean something: they keep them.
const OWN_KEYS = [
  TYPING, "input[type=range]", "select", "[role=slider]", "[role=tab]", "[role=listbox]",
  "[role=combobox]", "[role=menu]", ".noUi-handle",
].join(", ");
const SLIDER = "[role=slider], .noUi-handle, input[type=range]";

function inView(element) {
  if (!element || !element.isConnected) return false;
  const box = element.getBoundingClientRect();
  return box.width > 0 && box.bottom > 0 && box.top < window.innerHeight;
}

function render({ model, el }) {
  const app = () => el.closest(".tinyinit-present");
  let lastKey = { target: null, time: 0 };
  let blank = null; // the element covering the screen while it is blanked

  const unblank = () => {
    blank.remove();
    blank = null;
  };
  const blankScreen = (color) => {
    blank = document.createElement("div");
    blank.className = "tinyinit-blank";
    blank.setAttribute("role", "img");
    blank.setAttribute("aria-label", "Screen blanked: press any key to bring the app back");
    blank.style.cssText = `position:fixed;inset:0;z-index:100000;background:${color};`
      + "cursor:none";
    blank.addEventListener("click", unblank);
    document.body.appendChild(blank);
  };

  const onKey = (event) => {
    lastKey = { target: event.target, time: Date.now() };
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target instanceof Element ? event.target : null;
    const root = app();
    if (event.tinyinitKey) return; // one app answers a key
    if (blank) {
      // Any key brings the app back, and does nothing else.
      if (["Shift", "Control", "Alt", "Meta"].includes(event.key)) return;
      event.tinyinitKey = true;
      event.preventDefault();
      event.stopPropagation();
      unblank();
      return;
    }
    if (event.shiftKey) return;
    if (event.key === "Escape") {
      // Give the keys back to the clicker: the focused control lets go.
      if (target && root && root.contains(target)) target.blur();
      return;
    }
    const typing = target && target.closest(TYPING);
    if (!inView(root) || typing) return;
    let step = null;
    if (event.key in BLANK) {
      event.tinyinitKey = true;
      event.preventDefault();
      blankScreen(BLANK[event.key]);
      return;
    }
    if (CLICKER.has(event.key)) step = NEXT.has(event.key) ? 1 : -1;
    else if (!(target && target.closest(OWN_KEYS))) {
      step = NEXT.has(event.key) ? 1 : PREVIOUS.has(event.key) ? -1 : ENDS[event.key] || null;
    }
    if (step === null) return;
    event.tinyinitKey = true;
    event.preventDefault(); // no scrolling, no slider jump: the app fits the page
    event.stopPropagation();
    model.send({ step });
  };

  // A demonstration picked with the mouse leaves the menu focused, where the
  // clicker's next → would pick another one: the menu lets go. Picked
  // with the keyboard, it keeps the focus and its keys.
  const onChange = (event) => {
    const target = event.target;
    if (!(target instanceof HTMLSelectElement) || !target.closest(".tinyinit-preset")) return;
    const keyed = lastKey.target === target && Date.now() - lastKey.time < 1000;
    if (!keyed) target.blur();
  };

  // A slider dragged with the mouse keeps the focus after the drag, where the clicker's
  // arrows would move it: it lets go when the button is released. Reached with Tab,
  // it keeps the focus and its keys.
  let pressed = null;
  const onPointerDown = (event) => {
    const root = app();
    const target = event.target instanceof Element ? event.target : null;
    pressed = target && root && root.contains(target) ? target.closest(".widget-slider") : null;
  };
  const onPointerUp = () => {
    const slider = pressed;
    pressed = null;
    if (!slider) return;
    setTimeout(() => {
      const focused = document.activeElement;
      if (focused && focused.matches(SLIDER) && slider.contains(focused)) focused.blur();
    }, 0);
  };

  // The page's size, where the plot starts and the room the app takes under it, so the
  // kernel can fit the plot.
  let sent = "";
  const report = () => {
    const root = app();
    if (!root) return;
    // The top of what the open tab shows: a plot, or the students' link.
    const areas = [...root.querySelectorAll(".tinyinit-plot-area, .tinyinit-share-view")];
    // Each tab's area told too: a tab that opens shows its area, whose top may differ.
    areas.forEach((a) => resizes.observe(a));
    const area = areas.find((a) => a.offsetParent !== null);
    const stage = root.querySelector(".tinyinit-stage");
    if (!area || !stage) return;
    const top = area.getBoundingClientRect().top + window.scrollY;
    const below = root.getBoundingClientRect().bottom - stage.getBoundingClientRect().bottom;
    const page = {
      width: Math.round(root.getBoundingClientRect().width),
      height: window.innerHeight,
      top: Math.round(top),
      below: Math.ceil(below),
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
    if (!root) return setTimeout(start, 100); // not yet on the page
    resizes.observe(root);
    soon();
  };

  document.addEventListener("keydown", onKey, true);
  document.addEventListener("change", onChange, true);
  document.addEventListener("pointerdown", onPointerDown, true);
  document.addEventListener("pointerup", onPointerUp, true);
  window.addEventListener("resize", soon);
  start();
  return () => {
    alive = false;
    if (blank) unblank();
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("change", onChange, true);
    document.removeEventListener("pointerdown", onPointerDown, true);
    document.removeEventListener("pointerup", onPointerUp, true);
    window.removeEventListener("resize", soon);
    resizes.disconnect();
    clearTimeout(pending);
  };
}
export default { render };
