"""URLs of studies recruited by link: joining, the end page, participants."""

from __future__ import annotations

from django.urls import path

from studies.views import campaigns, join

urlpatterns = [
    path("campaigns/new/", campaigns.campaign_new, name="campaign_new"),
    path("campaigns/<int:pk>/", campaigns.campaign_entry, name="campaign_entry"),
    path("join/<slug:token>/", join.join, name="join"),
    path("campaigns/<int:pk>/end/", join.participant_end, name="participant_end"),
    path("campaigns/<int:pk>/participants/", join.campaign_participants, name="campaign_participants"),
    path("campaigns/<int:pk>/link/revoke/", join.campaign_link_revoke, name="campaign_link_revoke"),
    path("campaigns/<int:pk>/participants/<int:participant_pk>/flag/", join.participant_flag,
         name="participant_flag"),
]
