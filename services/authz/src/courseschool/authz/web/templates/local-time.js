// Course School: the times on this page in the reader's own time zone. Without this
// script they read in UTC, and say so. Each <time datetime="...Z"> is rewritten, and the
// note that names the time zone with it.
(function () {
  "use strict";
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  var shown = 0;
  document.querySelectorAll("time[datetime]").forEach(function (element) {
    var when = new Date(element.getAttribute("datetime"));
    if (!isNaN(when.getTime())) {
      element.textContent = format.format(when);
      element.title = element.getAttribute("datetime");
      shown += 1;
    }
  });
  var note = document.getElementById("time-zone-note");
  if (note && shown > 0) {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    note.textContent = "Times are in your computer's time zone" + (zone ? " (" + zone + ")." : ".");
  }
})();
