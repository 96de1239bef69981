// Bar chart of charge accuracy per category; the table beside it holds the same numbers.
(function () {
  const data = document.getElementById("category-data");
  const canvas = document.getElementById("category-chart");
  if (!data || !canvas || typeof Chart === "undefined") return;
  const rows = JSON.parse(data.textContent);
  new Chart(canvas, {
    type: "bar",
    data: {
      labels: rows.map((r) => r.title),
      datasets: [
        { label: "charge accuracy %", data: rows.map((r) => (r.charge_accuracy == null ? null : 100 * r.charge_accuracy)), backgroundColor: "#1f4e8c" },
        { label: "article accuracy %", data: rows.map((r) => (r.article_accuracy == null ? null : 100 * r.article_accuracy)), backgroundColor: "#9a6700" },
      ],
    },
    options: { animation: false, scales: { y: { min: 0, max: 100 } } },
  });
})();
