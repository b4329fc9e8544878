-- A results database of schema version 2, as run_models before issue 27 made it (its
-- export of tests/telemetry/h100's run into PostgreSQL 15; pg_dump --no-owner
-- --no-privileges): migration 3 must keep its rows. tests/results/cases.sh db_migrate_v2.
--
-- PostgreSQL database dump
--

\restrict 42rwwfhduOXmLP1E2aEtQi9bifaA0ecvyUsqIkhsO8nXGrjJhl8gqAJfXWXrxZt

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: accepted; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accepted (
    id bigint NOT NULL,
    model text NOT NULL,
    metric text DEFAULT ''::text NOT NULL,
    docker_file text DEFAULT ''::text NOT NULL,
    gpu_architecture text DEFAULT ''::text NOT NULL,
    n_gpus text DEFAULT ''::text NOT NULL,
    machine_name text DEFAULT ''::text NOT NULL,
    since_run text NOT NULL,
    since_at timestamp with time zone,
    accepted_at timestamp with time zone NOT NULL,
    reason text DEFAULT ''::text NOT NULL
);


--
-- Name: accepted_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.accepted ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.accepted_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: environment; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.environment (
    run_id text NOT NULL,
    name text NOT NULL,
    value text NOT NULL
);


--
-- Name: metrics; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.metrics (
    id bigint NOT NULL,
    run_id text NOT NULL,
    ts timestamp with time zone,
    model text NOT NULL,
    metric text NOT NULL,
    aggregate text DEFAULT ''::text NOT NULL,
    step integer DEFAULT '-1'::integer NOT NULL,
    repeat integer DEFAULT 1 NOT NULL,
    value double precision,
    unit text DEFAULT ''::text NOT NULL
);


--
-- Name: metrics_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.metrics ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.metrics_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: results; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.results (
    id bigint NOT NULL,
    model text NOT NULL,
    n_gpus text,
    nnodes text,
    gpus_per_node text,
    training_precision text,
    pipeline text,
    args text,
    tags text,
    docker_file text DEFAULT ''::text NOT NULL,
    base_docker text,
    docker_sha text,
    docker_image text,
    git_commit text,
    machine_name text DEFAULT ''::text NOT NULL,
    deployment_type text,
    launcher text,
    gpu_architecture text DEFAULT ''::text NOT NULL,
    performance double precision,
    metric text DEFAULT ''::text NOT NULL,
    relative_change double precision,
    status text NOT NULL,
    build_duration double precision,
    test_duration double precision,
    dataname text,
    data_provider_type text,
    data_size text,
    data_download_duration text,
    build_number text,
    additional_docker_run_options text,
    ts timestamp with time zone NOT NULL,
    run_id text NOT NULL,
    repeat integer DEFAULT 1 NOT NULL,
    reason text,
    tunableop text,
    exit_code integer,
    log_file text,
    direction text DEFAULT 'unknown'::text NOT NULL,
    CONSTRAINT results_direction_check CHECK ((direction = ANY (ARRAY['higher'::text, 'lower'::text, 'unknown'::text]))),
    CONSTRAINT results_repeat_check CHECK ((repeat >= 1)),
    CONSTRAINT results_status_check CHECK ((status = ANY (ARRAY['SUCCESS'::text, 'FAILURE'::text, 'SKIPPED'::text])))
);


--
-- Name: results_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.results ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.results_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: rm_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rm_schema (
    version integer NOT NULL,
    description text NOT NULL,
    applied_at text NOT NULL
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    run_id text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    machine_name text DEFAULT ''::text NOT NULL,
    gpu_architecture text DEFAULT ''::text NOT NULL,
    git_commit text DEFAULT ''::text NOT NULL,
    suite text DEFAULT ''::text NOT NULL,
    build_number text DEFAULT ''::text NOT NULL,
    exported_at timestamp with time zone NOT NULL
);


--
-- Data for Name: accepted; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.accepted (id, model, metric, docker_file, gpu_architecture, n_gpus, machine_name, since_run, since_at, accepted_at, reason) FROM stdin;
\.


--
-- Data for Name: environment; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.environment (run_id, name, value) FROM stdin;
\.


--
-- Data for Name: metrics; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.metrics (id, run_id, ts, model, metric, aggregate, step, repeat, value, unit) FROM stdin;
1	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	TFLOPS	summary	-1	1	676.68	
2	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_power_avg_w	summary	-1	1	445.9293553	W
3	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_power_max_w	summary	-1	1	710.07	W
4	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_energy_j	summary	-1	1	7598.010085	J
5	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_vram_max_mib	summary	-1	1	1139	MiB
6	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_util_avg_pct	summary	-1	1	59.30588235	%
7	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_temp_max_c	summary	-1	1	62	C
8	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	gpu_throttle_pct	summary	-1	1	25	%
9	20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	gpu_gemm_bf16	performance_per_watt	summary	-1	1	1.517460091	TFLOPS/W
\.


--
-- Data for Name: results; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.results (id, model, n_gpus, nnodes, gpus_per_node, training_precision, pipeline, args, tags, docker_file, base_docker, docker_sha, docker_image, git_commit, machine_name, deployment_type, launcher, gpu_architecture, performance, metric, relative_change, status, build_duration, test_duration, dataname, data_provider_type, data_size, data_download_duration, build_number, additional_docker_run_options, ts, run_id, repeat, reason, tunableop, exit_code, log_file, direction) FROM stdin;
1	gpu_gemm_bf16	1	1	1	bf16			gpu	docker/hostuser.Dockerfile	scratch	sha256:719ff43a177ce3260c780b362698dc34cee547d7fc1eb2a5482df57befe31f81	ci-gpu_gemm_bf16_hostuser		vm	local	docker	sm_90	676.68	TFLOPS	\N	SUCCESS	0.843	17.039						 --device /dev/nvidia0 --device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools -v /usr:/usr:ro -v /opt:/opt:ro -v /etc/ld.so.cache:/etc/ld.so.cache:ro -v /lib:/lib:ro -v /lib64:/lib64:ro -e GPU_PYTHON=/opt/torch/.venv/bin/python3 -e LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib --ipc=host	2026-11-26 23:36:20+00	20261126T233602Z-567-72b8	1			0	/tmp/gpu-work/logs/gpu_gemm_bf16.20261126T233602Z-567-72b8.live.log	higher
2	gpu_hf_gpt2	1	1	1	bf16			gpu	docker/hostuser.Dockerfile	scratch	sha256:719ff43a177ce3260c780b362698dc34cee547d7fc1eb2a5482df57befe31f81	ci-gpu_hf_gpt2_hostuser		vm	local	docker	sm_90	290.715	samples_per_second	\N	SUCCESS	0.067	24.594						 --device /dev/nvidia0 --device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools -v /usr:/usr:ro -v /opt:/opt:ro -v /etc/ld.so.cache:/etc/ld.so.cache:ro -v /lib:/lib:ro -v /lib64:/lib64:ro -e GPU_PYTHON=/opt/torch/.venv/bin/python3 -e LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib --ipc=host	2026-11-26 23:36:45+00	20261126T233602Z-567-72b8	1			0	/tmp/gpu-work/logs/gpu_hf_gpt2.20261126T233602Z-567-72b8.live.log	higher
3	gpu_skip_h100	1	1	1	bf16			gpu						vm	local	docker	sm_90	\N		\N	SKIPPED	0	0						 --device /dev/nvidia0 --device /dev/nvidiactl --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools -v /usr:/usr:ro -v /opt:/opt:ro -v /etc/ld.so.cache:/etc/ld.so.cache:ro -v /lib:/lib:ro -v /lib64:/lib64:ro -e GPU_PYTHON=/opt/torch/.venv/bin/python3 -e LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib --ipc=host	2026-11-26 23:36:45+00	20261126T233602Z-567-72b8	1	skip_gpu_arch ('H100') names this host's GPU 'NVIDIA H100 80GB HBM3' (--disable-skip-gpu-arch runs it)		\N		unknown
\.


--
-- Data for Name: rm_schema; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.rm_schema (version, description, applied_at) FROM stdin;
1	runs, results, metrics, environment	2026-11-27T03:07:53Z
2	accepted changes	2026-11-27T03:07:53Z
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.runs (run_id, started_at, machine_name, gpu_architecture, git_commit, suite, build_number, exported_at) FROM stdin;
20261126T233602Z-567-72b8	2026-11-26 23:36:20+00	vm	sm_90				2026-11-27 03:07:53+00
\.


--
-- Name: accepted_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.accepted_id_seq', 1, false);


--
-- Name: metrics_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.metrics_id_seq', 9, true);


--
-- Name: results_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.results_id_seq', 3, true);


--
-- Name: accepted accepted_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accepted
    ADD CONSTRAINT accepted_pkey PRIMARY KEY (id);


--
-- Name: environment environment_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment
    ADD CONSTRAINT environment_pkey PRIMARY KEY (run_id, name);


--
-- Name: metrics metrics_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metrics
    ADD CONSTRAINT metrics_pkey PRIMARY KEY (id);


--
-- Name: metrics metrics_run_id_model_metric_aggregate_step_repeat_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metrics
    ADD CONSTRAINT metrics_run_id_model_metric_aggregate_step_repeat_key UNIQUE (run_id, model, metric, aggregate, step, repeat);


--
-- Name: results results_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_pkey PRIMARY KEY (id);


--
-- Name: results results_run_id_model_docker_file_metric_repeat_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_run_id_model_docker_file_metric_repeat_key UNIQUE (run_id, model, docker_file, metric, repeat);


--
-- Name: rm_schema rm_schema_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rm_schema
    ADD CONSTRAINT rm_schema_pkey PRIMARY KEY (version);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (run_id);


--
-- Name: accepted_model; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX accepted_model ON public.accepted USING btree (model);


--
-- Name: results_series; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX results_series ON public.results USING btree (model, metric, gpu_architecture, machine_name);


--
-- Name: results_ts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX results_ts ON public.results USING btree (ts);


--
-- Name: environment environment_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment
    ADD CONSTRAINT environment_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(run_id);


--
-- Name: metrics metrics_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metrics
    ADD CONSTRAINT metrics_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(run_id);


--
-- Name: results results_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(run_id);


--
-- PostgreSQL database dump complete
--

\unrestrict 42rwwfhduOXmLP1E2aEtQi9bifaA0ecvyUsqIkhsO8nXGrjJhl8gqAJfXWXrxZt

