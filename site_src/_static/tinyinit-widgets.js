// Where the widget renderer finds the widget modules it does not bundle: in this site,
// not on a CDN (ipympl's figure, anywidget's runtime). The renderer's own modules are
// named @jupyter-widgets/...: mapped to its folder, they find their icon fonts there.
require.config({
  paths: {
    "@jupyter-widgets/html-manager/dist": "_static/html-manager",
    "@jupyter-widgets": "_static/html-manager",
    "jupyter-matplotlib": "_static/jupyter-matplotlib/index",
    anywidget: "_static/anywidget/index",
  },
});
