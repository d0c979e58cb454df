// The page's only script: step selection, jump keys and play. It reads
// the rendered page and never evaluates anything from the report.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var items = Array.prototype.slice.call(document.querySelectorAll(".steplist li"));
  var steps = Array.prototype.slice.call(document.querySelectorAll(".step"));
  var current = -1;
  var timer = null;
  var play = document.getElementById("play");

  function select(i) {
    if (steps.length === 0) { return; }
    i = Math.max(0, Math.min(steps.length - 1, i));
    if (current >= 0) {
      steps[current].classList.remove("selected");
      items[current].setAttribute("aria-current", "false");
    }
    current = i;
    steps[i].classList.add("selected");
    items[i].setAttribute("aria-current", "true");
    items[i].scrollIntoView({block: "nearest"});
    document.body.setAttribute("data-selected", steps[i].getAttribute("data-n"));
  }

  function jump(dir, test) {
    for (var i = current + dir; i >= 0 && i < steps.length; i += dir) {
      if (test(steps[i])) { select(i); return; }
    }
  }

  function isRefusal(s) { var st = s.getAttribute("data-status"); return st === "refused" || st === "malformed"; }
  function isGrounding(s) { return s.getAttribute("data-grounding") === "true"; }
  function isFailure(s) { return s.getAttribute("data-status") !== "ok"; }

  function stop() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    if (play) { play.textContent = "▶ play"; }
  }

  function next() {
    if (current >= steps.length - 1) { stop(); return; }
    var now = Number(steps[current].getAttribute("data-t"));
    var then = Number(steps[current + 1].getAttribute("data-t"));
    timer = setTimeout(function () { select(current + 1); next(); }, Math.max(0, then - now));
  }

  function toggle() {
    if (timer !== null) { stop(); return; }
    if (current >= steps.length - 1) { select(0); }
    if (play) { play.textContent = "❚❚ pause"; }
    next();
  }

  // indexOf is the position of step n in the list, or -1.
  function indexOf(n) {
    for (var i = 0; i < steps.length; i++) {
      if (steps[i].getAttribute("data-n") === String(n)) { return i; }
    }
    return -1;
  }

  // fromHash shows the step a #step-N link names and brings it into view.
  function fromHash() {
    var m = /^#step-(\d+)$/.exec(window.location.hash);
    var i = m ? indexOf(m[1]) : -1;
    if (i < 0) { return false; }
    stop();
    select(i);
    steps[i].scrollIntoView({block: "start"});
    return true;
  }

  // A screenshot check's slider shows the window over its baseline up to
  // the slider's place, so a person finds the change by sliding.
  Array.prototype.slice.call(document.querySelectorAll(".compare")).forEach(function (c) {
    var over = c.querySelector("img.over");
    var range = c.querySelector("input");
    function clip() { over.style.clipPath = "inset(0 0 0 " + range.value + "%)"; }
    range.addEventListener("input", clip);
    clip();
    c.hidden = false;
  });

  items.forEach(function (li, i) {
    li.addEventListener("click", function (e) {
      // The link's own navigation would scroll to the step: the list
      // stays where it is and the address still names the step.
      e.preventDefault();
      stop();
      select(i);
      history.replaceState(null, "", "#step-" + steps[i].getAttribute("data-n"));
    });
  });
  window.addEventListener("hashchange", fromHash);
  if (play) { play.addEventListener("click", toggle); }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    var handled = true;
    switch (e.key) {
      case "ArrowRight": case "l": stop(); select(current + 1); break;
      case "ArrowLeft": case "h": stop(); select(current - 1); break;
      case "Home": case "<": stop(); select(0); break;
      case "End": case ">": stop(); select(steps.length - 1); break;
      case "r": stop(); jump(1, isRefusal); break;
      case "R": stop(); jump(-1, isRefusal); break;
      case "g": stop(); jump(1, isGrounding); break;
      case "G": stop(); jump(-1, isGrounding); break;
      case "e": stop(); jump(1, isFailure); break;
      case "E": stop(); jump(-1, isFailure); break;
      case " ": toggle(); break;
      default: handled = false;
    }
    if (handled) { e.preventDefault(); }
  });
  // A #step-N link opens that step; otherwise the first step that did
  // not succeed, or the first step.
  if (!fromHash()) {
    var section = document.getElementById("steps");
    var open = section ? indexOf(section.getAttribute("data-open")) : -1;
    select(Math.max(0, open));
  }
})();
