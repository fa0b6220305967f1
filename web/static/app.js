// Live progress of a launch, from its Server-Sent Events.
(function () {
  "use strict";
  var box = document.getElementById("launch");
  if (!box || !window.EventSource) { return; }
  var es = new EventSource(box.getAttribute("data-events"));
  es.addEventListener("progress", function (e) {
    var p = JSON.parse(e.data);
    document.getElementById("state").textContent = p.state;
    document.getElementById("done").textContent = String(p.done);
    document.getElementById("total").textContent = String(p.total);
    document.getElementById("bar").value = p.fraction;
    document.getElementById("message").textContent = p.error || "";
    var res = document.getElementById("result");
    if (p.run_id && !res.querySelector("a")) {
      var a = document.createElement("a");
      a.href = "/runs/" + p.run_id;
      a.textContent = "run " + p.run_id;
      res.appendChild(a);
    }
    if (p.final) {
      es.close();
      var c = document.getElementById("cancel-form");
      if (c) { c.remove(); }
      box.setAttribute("data-final", p.state);
    }
  });
})();
