package org.locksmith.lock.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** The PNG charts of the report: S1 latency percentiles, S3 grants/s under contention, S4 hand-off times. */
final class Charts {
    static final String S1 = "benchmarks-s1-latency.png";
    static final String S3 = "benchmarks-s3-contended.png";
    static final String S4 = "benchmarks-s4-handoff.png";

    private Charts() {}

    static void write(Results results, Path dir) throws IOException {
        if (!results.uncontended.isEmpty()) {
            CategoryChart chart = chart("S1 uncontended acquire + release latency (log scale)", "µs");
            List<String> names = names(results.uncontended, Results.Uncontended::contender);
            chart.addSeries("p50", names, values(results.uncontended, Results.Uncontended::p50Micros));
            chart.addSeries("p99", names, values(results.uncontended, Results.Uncontended::p99Micros));
            chart.addSeries("p99.9", names, values(results.uncontended, Results.Uncontended::p999Micros));
            logScale(chart, values(results.uncontended, Results.Uncontended::p50Micros));
            BitmapEncoder.saveBitmap(chart, dir.resolve(S1).toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        if (!results.contended.isEmpty()) {
            CategoryChart chart = chart("S3 grants/s, 8 clients on one key (median of rounds)", "grants/s");
            List<String> names = names(results.contended, Results.Contended::contender);
            List<Double> ours = new ArrayList<>();
            List<Double> peers = new ArrayList<>();
            for (Results.Contended c : results.contended) {
                boolean isOurs = Contenders.byName(c.contender()).ours();
                ours.add(isOurs ? c.grantsPerSecond() : 0);
                peers.add(isOurs ? 0 : c.grantsPerSecond());
            }
            chart.addSeries("Locksmith", names, ours);
            chart.addSeries("peers", names, peers);
            chart.getStyler().setOverlapped(true);
            BitmapEncoder.saveBitmap(chart, dir.resolve(S3).toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        if (!results.handoff.isEmpty()) {
            CategoryChart chart = chart("S4 hand-off: release call to the waiter's grant (log scale)", "µs");
            List<String> names = names(results.handoff, Results.Handoff::contender);
            chart.addSeries("p50", names, values(results.handoff, Results.Handoff::p50Micros));
            chart.addSeries("p99", names, values(results.handoff, Results.Handoff::p99Micros));
            logScale(chart, values(results.handoff, Results.Handoff::p50Micros));
            BitmapEncoder.saveBitmap(chart, dir.resolve(S4).toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** A log axis whose bars start at the power of ten below the smallest value (XChart's bar base is 0). */
    private static void logScale(CategoryChart chart, List<Double> smallest) {
        double min = smallest.stream().mapToDouble(Double::doubleValue).min().orElse(1);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(min))));
    }

    private static CategoryChart chart(String title, String yTitle) {
        CategoryChart chart = new CategoryChartBuilder()
                .width(1100)
                .height(560)
                .title(title)
                .xAxisTitle("")
                .yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setXAxisLabelRotation(30);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setPlotGridVerticalLinesVisible(false);
        return chart;
    }

    private static <T> List<String> names(List<T> rows, java.util.function.Function<T, String> name) {
        return rows.stream().map(name).toList();
    }

    private static <T> List<Double> values(List<T> rows, ToDoubleFunction<T> value) {
        // A log axis cannot show 0 (a percentile of very few samples can be): draw it at the axis floor.
        return rows.stream().map(r -> Math.max(0.1, value.applyAsDouble(r))).toList();
    }
}
