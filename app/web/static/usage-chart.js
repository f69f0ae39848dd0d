// The Usage page's chart: credits used per UTC day, from the canvas's data-series (Chart.js).
const canvas = document.getElementById('usage-chart');
if (canvas && window.Chart) {
  const series = JSON.parse(canvas.dataset.series);
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#4f46e5';
  new window.Chart(canvas, {
    type: 'bar',
    data: {
      labels: series.labels,
      datasets: [{ label: 'Credits used', data: series.credits, backgroundColor: accent, borderRadius: 3, maxBarThickness: 28 }],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (item) => `${item.formattedValue} credits` } } },
      scales: {
        x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, callback: (_, i) => series.labels[i].slice(5) } },
        y: { beginAtZero: true, ticks: { precision: 0 } },
      },
    },
  });
}
