import os
import signal

import pytest

from tft_allennlp.training.stop_signals import StopRequest


def test_a_stop_signal_is_held_a_second_sigterm_too_and_a_second_ctrl_c_stops_at_once():
    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    with StopRequest() as request:
        assert request.signal is None
        os.kill(os.getpid(), signal.SIGTERM)
        assert request.signal == signal.SIGTERM  # held: this line runs
        os.kill(os.getpid(), signal.SIGTERM)  # the same request again (a harness passes it on)
        assert request.signal == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            pytest.fail("the second signal, a Ctrl-C, did not stop at once")
        # The Ctrl-C gave the handlers back.
        assert {number: signal.getsignal(number) for number in before} == before
    assert {number: signal.getsignal(number) for number in before} == before


def test_a_first_ctrl_c_is_held_too():
    with StopRequest() as request:
        os.kill(os.getpid(), signal.SIGINT)
        assert request.signal == signal.SIGINT
