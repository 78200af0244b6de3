// Draws every <div class="chart" data-figure="ID"> with the Plotly figure in <script id="ID" type="application/json">.
document.querySelectorAll("div.chart[data-figure]").forEach(function (div) {
  var figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
  Plotly.newPlot(div, figure.data, figure.layout, {responsive: true, displaylogo: false});
});
