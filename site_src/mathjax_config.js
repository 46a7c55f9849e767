// MathJax 3's configuration for the course site: Sphinx puts this file's text in every page
// with formulas, before MathJax itself (_static/mathjax/tex-svg-full.js, from the npm
// package mathjax, copied by course_site.py), so no page asks another host for anything.
//
// SVG output: each formula is one picture drawn in the text's colour, with a hidden MathML
// copy that screen readers read (MathJax's assistive MathML), so both themes show it and a
// reader of either hears it.
(() => {
  // The widget renderer (@jupyter-widgets/html-manager) typesets a widget's label as it
  // draws it, by MathJax 2's call, MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]).
  // Until MathJax has started, the elements wait; after, MathJax 3 typesets each, one after
  // another. MathJax 3, as it starts, puts an object of its own in window.MathJax (this
  // configuration becomes its .config), and it is ready only once ui/safe has loaded: a
  // widget drawn in between finds the waiting Hub on that object too.
  const waiting = [];
  const waitingHub = { Queue: (job) => waiting.push(job[2]) };
  let mathjax = {
    tex: {
      inlineMath: [["$", "$"], ["\\(", "\\)"]],
      displayMath: [["$$", "$$"], ["\\[", "\\]"]],
      processEscapes: true,
    },
    options: {
      // MyST marks each page tex2jax_ignore and its formulas "math"; widgets and stored
      // outputs hold formulas of their own.
      ignoreHtmlClass: "tex2jax_ignore|mathjax_ignore",
      processHtmlClass: "math|cell_output|jupyter-widgets",
      // MathJax's own menu is not keyboard friendly; the formulas stay readable without it.
      enableMenu: false,
    },
    // ui/safe: TeX in a notebook's output may not set links, styles or ids of its own.
    loader: { load: ["ui/safe"] },
    svg: { fontCache: "global" },
    Hub: waitingHub,
    startup: {
      ready() {
        MathJax.startup.defaultReady();
        const typeset = (element) => {
          MathJax.startup.promise = MathJax.startup.promise
            .then(() => MathJax.typesetPromise([element]))
            .then(scrollingFormulasTakeTheTab);
        };
        MathJax.Hub = { Queue: (job) => typeset(job[2]) };
        MathJax.startup.promise = MathJax.startup.promise.then(scrollingFormulasTakeTheTab);
        waiting.splice(0).forEach(typeset);
        window.addEventListener("resize", scrollingFormulasTakeTheTab);
      },
    },
  };
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: () => mathjax,
    set: (value) => {
      mathjax = value;
      if (!mathjax.Hub) mathjax.Hub = waitingHub;
    },
  });
})();

// A display formula wider than its column (a phone's, say) scrolls sideways (the theme gives
// it overflow: auto). One that scrolls is given a tab stop, so that it can be scrolled from
// the keyboard too; one that fits is not, so that the tab key does not stop at every formula.
function scrollingFormulasTakeTheTab() {
  for (const formula of document.querySelectorAll("div.math mjx-container")) {
    if (formula.scrollWidth > formula.clientWidth) formula.setAttribute("tabindex", "0");
    else formula.removeAttribute("tabindex");
  }
}
