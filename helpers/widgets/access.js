// What an explorer tells a screen reader and a keyboard (helpers/widgets/base.py, words).
// ipywidgets 8 gives a slider's handle no name and announces a log slider's exponent: each
// handle of the explorer gets its slider's label as its name and the value its number box
// shows as its value text; the explorer's image gets the figure's name as its alt text and
// the figure in words as its description, read out when a move redraws it.
const plain = (x) => String(Number(x.toPrecision(4)));

function set(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

export default {
  render({ model, el }) {
    const id = `pe-words-${Math.random().toString(36).slice(2)}`;
    el.classList.add("pe-words");
    const details = document.createElement("details");
    const summary = document.createElement("summary");
    const text = document.createElement("p");
    text.id = id;
    details.append(summary, text);
    const live = document.createElement("div");
    live.className = "pe-live";
    live.setAttribute("aria-live", "polite");
    live.style.cssText =
      "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap";
    el.append(details, live);

    let box = null;
    const label = () => {
      if (!box) return;
      const sliders = model.get("sliders");
      for (const slider of box.querySelectorAll(".widget-slider")) {
        const name = slider.querySelector(".widget-label");
        const handle = slider.querySelector(".noUi-handle");
        const target = slider.querySelector(".noUi-target");
        if (!name || !handle) continue;
        const spec = sliders[name.textContent] || {};
        set(handle, "aria-label", name.textContent);
        // the handle's own value (aria-valuenow is rounded to one decimal)
        const now = Number(target && target.noUiSlider ? target.noUiSlider.get() : NaN);
        if (Number.isFinite(now)) {
          set(handle, "aria-valuetext", plain(spec.base ? spec.base ** now : now));
        }
        // its number box: named after the slider; the box's empty, hidden label unlinked
        const pair = slider.closest(".pe-control");
        const input = pair && pair.querySelector(".pe-value input");
        if (input) {
          set(input, "aria-label", `${name.textContent}: ${model.get("box_hint")}`);
          for (const hidden of pair.querySelectorAll(".pe-value label[for]")) {
            hidden.removeAttribute("for");
          }
        }
      }
      const img = box.querySelector("img");
      if (img) {
        set(img, "alt", model.get("alt"));
        set(img, "aria-describedby", id);
      }
    };
    const words = () => {
      summary.textContent = model.get("caption");
      text.textContent = model.get("summary");
      live.textContent = model.get("summary");
      label();
    };
    const observer = new MutationObserver(label);
    let tries = 0;
    const start = () => {
      box = el.closest(".pe-explorer");
      if (!box) {
        if (tries++ < 600) requestAnimationFrame(start);
        return;
      }
      observer.observe(box, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ["aria-valuenow", "aria-valuetext", "src", "for"],
      });
      words();
    };
    model.on("change:summary", words);
    model.on("change:alt", label);
    summary.textContent = model.get("caption");
    text.textContent = model.get("summary");
    start();
    return () => observer.disconnect();
  },
};
