// A made-up router in the shape of TGI's: what the reader must find.
fn record(total_time: Duration) {
    metrics::counter!("tgi_request_count").increment(1);
    metrics::counter!("tgi_request_failure", "err" => "validation").increment(1);
    metrics::counter!("tgi_request_failure", "err" => "exploded").increment(1);
    metrics::histogram!("tgi_request_duration").record(total_time.as_secs_f64());
    metrics::histogram!(
        "tgi_request_skipped_tokens"
    )
    .record(1.0);
    metrics::gauge!("tgi_made_up_gauge", "shard" => shard.to_string()).set(1.0);
    // metrics::counter!("tgi_commented_out").increment(1);
    metrics::histogram!("tgi_queue_size").record(1.0);
}

fn setup() {
    let duration_matcher = Matcher::Suffix(String::from("duration"));
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(duration_matcher, &duration_buckets)
        .unwrap();
    metrics::describe_gauge!("tgi_batch_total_tokens", "described, never set");
    metrics::describe_gauge!("tgi_batch_current_size", "described here, set elsewhere");
}
