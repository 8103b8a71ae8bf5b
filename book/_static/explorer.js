/* Static explorers (markovlib.book.explorers): sliders over frames precomputed by a chapter's drawing function.
 * Each <div class="mk-explorer"> follows its sprite image (the previous image output of the same cell). The script
 * builds one range slider per parameter and a view that shows one tile of the sprite, plus the text that frame
 * displays. No network access: everything it uses is in the page. */
(function () {
  "use strict";

  function spriteFor(block) {
    var out = block.closest(".cell_output") || block.parentElement;
    var imgs = out ? out.querySelectorAll("img") : [];
    var cols = +block.dataset.cols, w = +block.dataset.tileW;
    for (var i = imgs.length - 1; i >= 0; i--) {
      var img = imgs[i];
      if (img.compareDocumentPosition(block) & Node.DOCUMENT_POSITION_FOLLOWING) {
        if (!img.naturalWidth || img.naturalWidth === cols * w) return img;
      }
    }
    return null;
  }

  function build(block) {
    if (block.dataset.ready) return;
    var sprite = spriteFor(block);
    if (!sprite) return;
    block.dataset.ready = "1";
    var sliders = JSON.parse(block.dataset.sliders), values = JSON.parse(block.dataset.values);
    var w = +block.dataset.tileW, h = +block.dataset.tileH, cols = +block.dataset.cols;
    var idx = +block.dataset.initial, pos = [], rest = idx;
    for (var s = sliders.length - 1; s >= 0; s--) {
      pos[s] = rest % sliders[s].labels.length;
      rest = Math.floor(rest / sliders[s].labels.length);
    }

    var view = document.createElement("div");
    view.className = "mk-explorer-view";
    view.style.width = w + "px";
    view.style.height = h + "px";
    var tile = sprite.cloneNode(false);
    tile.className = "mk-explorer-sprite";
    tile.removeAttribute("width");
    tile.removeAttribute("height");
    tile.alt = "frame of the explorer " + block.dataset.title;
    view.appendChild(tile);
    sprite.classList.add("mk-explorer-hidden-sprite");

    var controls = document.createElement("div");
    controls.className = "mk-explorer-controls";
    var readout = document.createElement("div");
    readout.className = "mk-explorer-value";
    readout.setAttribute("aria-live", "polite");

    function frameIndex() {
      var i = 0;
      for (var k = 0; k < sliders.length; k++) i = i * sliders[k].labels.length + pos[k];
      return i;
    }
    function redraw() {
      var i = frameIndex(), r = Math.floor(i / cols), c = i % cols;
      tile.style.left = -c * w + "px";
      tile.style.top = -r * h + "px";
      block.dataset.frame = String(i);
      readout.textContent = values[i];
      for (var k = 0; k < sliders.length; k++) {
        controls.querySelector('[data-slider="' + sliders[k].name + '"] .mk-explorer-label').textContent =
          sliders[k].name + " = " + sliders[k].labels[pos[k]];
      }
    }
    sliders.forEach(function (sl, k) {
      var row = document.createElement("label");
      row.className = "mk-explorer-slider";
      row.dataset.slider = sl.name;
      var text = document.createElement("span");
      text.className = "mk-explorer-label";
      var input = document.createElement("input");
      input.type = "range";
      input.min = "0";
      input.max = String(sl.labels.length - 1);
      input.step = "1";
      input.value = String(pos[k]);
      input.name = sl.name;
      input.disabled = sl.labels.length < 2;
      input.addEventListener("input", function () { pos[k] = +input.value; redraw(); });
      row.appendChild(text);
      row.appendChild(input);
      controls.appendChild(row);
    });
    block.insertBefore(readout, block.firstChild);
    block.insertBefore(controls, block.firstChild);
    block.insertBefore(view, block.firstChild);
    redraw();
  }

  function init() {
    var blocks = document.querySelectorAll(".mk-explorer");
    blocks.forEach(function (block) {
      var sprite = spriteFor(block);
      if (sprite && !sprite.complete) sprite.addEventListener("load", function () { build(block); });
      else build(block);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
