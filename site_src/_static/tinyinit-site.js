// The course site's own script: accessible widgets, the sidebar buttons at every width, panels
// that close once a link in them is tapped, figures drawn at a legible size, and search
// snippets cut from the page's text, in words rather than TeX.
import { watch } from "./tinyinit-a11y.js";

// The page's sliders get accessible names and the readouts become live regions, as the
// explorers do for themselves in JupyterLab and Voila (tinyinit/views/a11y.js).
watch(document.body);

// The sidebar (☰) and contents buttons. pydata-sphinx-theme 0.20 binds its handler to the
// first .primary-toggle and .secondary-toggle of the page, which sphinx-book-theme hides
// (the header's); the buttons a reader sees bind nothing and do nothing, at any width
// (pydata/pydata-sphinx-theme#2451, executablebooks/sphinx-book-theme#988). A click on a
// visible one is handed to the first, whose handlers open the panel: the dialog on a narrow
// screen, the sidebar folded or unfolded on a wide one (sphinx-book-theme's own handler).
for (const kind of ["primary-toggle", "secondary-toggle"]) {
  const bound = document.querySelector(`.${kind}`);
  for (const button of document.querySelectorAll(`.${kind}`)) {
    if (button === bound) continue;
    button.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      bound.click();
    });
  }
}

// On a phone the navigation and the page's contents open as dialogs over three quarters of the
// screen; a tap on one of their links goes there, and the dialog closes so the reader sees it.
for (const id of ["pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"]) {
  const dialog = document.getElementById(id);
  dialog?.addEventListener("click", (event) => {
    if (event.target.closest("a[href]") && dialog.open) dialog.close();
  });
}

// A figure is drawn for a page about 700 px wide, at 100 dpi: shrunk to a phone's 350 px its
// tick labels would be 5 px high. It is never drawn below LEGIBLE of its own size (its labels
// of 11 points stay above 11 px); a wider one scrolls sideways in its output's box, which the
// keyboard can then reach and scroll too (WCAG 2.1.1) while it is wider than the page.
export const LEGIBLE = 0.75;
const SCROLLS = "Figure wider than the page: scroll sideways";

function scrollable(box) {
  if (box.scrollWidth > box.clientWidth) {
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", SCROLLS);
  } else if (box.getAttribute("aria-label") === SCROLLS) {
    for (const name of ["tabindex", "role", "aria-label"]) box.removeAttribute(name);
  }
}
const resized = new ResizeObserver((entries) => entries.forEach((e) => scrollable(e.target)));

function legible(img) {
  if (!img.naturalWidth) return;
  img.style.minWidth = `${Math.round(img.naturalWidth * LEGIBLE)}px`;
  const box = img.closest(".output, .cell_output");
  scrollable(box);
  resized.observe(box);
}
for (const img of document.querySelectorAll(".bd-article .cell_output img")) {
  if (img.complete) legible(img);
  else img.addEventListener("load", () => legible(img), { once: true });
}

// Search snippets are cut from the pages' HTML before MathJax has typeset it, so they
// showed TeX source ("\(\mathcal{N}(0, 1)\)"). Here a formula is written in plain words
// and symbols instead: N(0, 1), σ², n_in.
const SYMBOLS = {
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", eta: "η",
  theta: "θ", lambda: "λ", mu: "μ", nu: "ν", pi: "π", rho: "ρ", sigma: "σ", tau: "τ",
  phi: "φ", varphi: "φ", chi: "χ", psi: "ψ", omega: "ω", ell: "ℓ", Sigma: "Σ", Phi: "Φ",
  Delta: "Δ", cdot: "·", times: "×", approx: "≈", sim: "~", le: "≤", leq: "≤", ge: "≥",
  geq: "≥", neq: "≠", ne: "≠", to: "→", rightarrow: "→", infty: "∞", partial: "∂",
  sqrt: "√", sum: "Σ", prod: "Π", ldots: "…", dots: "…", cdots: "…", pm: "±", in: "∈",
  mid: "|", lvert: "|", rvert: "|", Vert: "‖", top: "ᵀ", log: "log", exp: "exp",
  max: "max", min: "min", tanh: "tanh",
};
const SUPERSCRIPTS = {
  0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹",
  "-": "⁻", "+": "⁺", n: "ⁿ", T: "ᵀ",
};

function texToText(tex) {
  let text = tex
    .replace(/\\(?:left|right|big|Big|bigg|Bigg)\b/g, "")
    .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)")
    .replace(/\\(?:mathcal|mathbb|mathrm|mathbf|operatorname|text|textrm|mathit)\s*\{([^{}]*)\}/g, "$1")
    .replace(/\\([A-Za-z]+)/g, (whole, name) => SYMBOLS[name] ?? name)
    .replace(/\\[,;:! ]|~/g, " ")
    .replace(/\\\{|\\\}/g, (b) => b[1]);
  text = text.replace(/\^\{([^{}]*)\}|\^(.)/g, (whole, group, one) => {
    const exponent = group ?? one;
    const all = [...exponent].every((c) => c in SUPERSCRIPTS);
    return all ? [...exponent].map((c) => SUPERSCRIPTS[c]).join("") : `^(${exponent})`;
  });
  text = text.replace(/_\{([^{}]*)\}/g, "_$1");
  return text.replace(/[{}]/g, "").replace(/\s+/g, " ").trim();
}

// \( ... \), \[ ... \], $$ ... $$ and $ ... $ in a snippet's text.
const FORMULA = /\\\(([\s\S]+?)\\\)|\\\[([\s\S]+?)\\\]|\$\$([\s\S]+?)\$\$|\$([^$\n]+?)\$/g;

export function plainFormulas(text) {
  return text.replace(FORMULA, (whole, a, b, c, d) => texToText(a ?? b ?? c ?? d));
}

// Sphinx cuts each snippet from the page's [role=main], which in this theme holds the header's
// buttons too ("System Settings Light Dark ..."): here it is cut from the page's own text, the
// article, whitespace collapsed and formulas in words.
export function pageText(htmlString, anchor) {
  const page = new DOMParser().parseFromString(htmlString, "text/html");
  // A folded answer stays folded in the snippets too.
  for (const left of page.querySelectorAll(".headerlink, script, style, details.hide")) {
    left.remove();
  }
  const article = page.querySelector("article.bd-article") ?? page.querySelector('[role="main"]');
  if (!article) return "";
  const part = (anchor && article.querySelector(anchor)) || article;
  return plainFormulas(part.textContent.replace(/\s+/g, " ").trim());
}

if (typeof Search !== "undefined" && Search.htmlToText) {
  Search.htmlToText = pageText;
}
