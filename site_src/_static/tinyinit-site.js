// The page's sliders get accessible names and the readouts become live regions, as the
// explorers do for themselves in JupyterLab and Voila (tinyinit/a11y.js).
import { watch } from "./tinyinit-a11y.js";

watch(document.body);
